// FashionMNIST on the installed files, and read_idx / FashionMNIST on small fake files that are
// missing, corrupt or truncated (written as plain IDX or as hand-made gzip streams).
#include "janus/data/fashion_mnist.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>

#include "janus/data/data_loader.h"
#include "janus/data/idx.h"
#include "janus/engine/array.h"

#include "testing/temp_dir.h"
#include "testing/test_util.h"

namespace janus::data {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using Bytes = std::vector<uint8_t>;

// --- The installed data set -----------------------------------------------------------------

bool installed() { return fs::exists(fs::path(kFashionMNISTRoot) / "t10k-labels-idx1-ubyte.gz"); }

/// Loaded once per program: the training set alone is 188 MB of float32.
const FashionMNIST& installed_split(bool train) {
  static const FashionMNIST test_set(std::string(kFashionMNISTRoot), false);
  if (!train) return test_set;
  static const FashionMNIST train_set;
  return train_set;
}

void expect_valid_split(const FashionMNIST& ds, int64_t n) {
  EXPECT_EQ(ds.size(), n);
  EXPECT_EQ(ds.images().shape(), Shape({n, 1, 28, 28}));
  EXPECT_EQ(ds.images().dtype(), DType::kFloat32);
  EXPECT_EQ(ds.labels().shape(), Shape({n}));
  EXPECT_EQ(ds.labels().dtype(), DType::kInt32);

  // Fashion-MNIST is balanced: n / 10 samples of each class.
  std::vector<int32_t> labels = to_vector<int32_t>(ds.labels());
  std::array<int64_t, 10> counts{};
  for (int32_t l : labels) {
    ASSERT_GE(l, 0);
    ASSERT_LE(l, 9);
    ++counts[static_cast<size_t>(l)];
  }
  for (int64_t c : counts) EXPECT_EQ(c, n / 10);

  const float* px = ds.images().data<float>();  // host data that nothing writes any more
  const auto [lo, hi] = std::minmax_element(px, px + ds.images().size());
  EXPECT_EQ(*lo, 0.0f);
  EXPECT_EQ(*hi, 1.0f);
}

TEST(FashionMNIST, ReadsTheTestSet) {
  if (!installed()) GTEST_SKIP() << "the Debian package dataset-fashion-mnist is not installed";
  expect_valid_split(installed_split(false), 10000);
}

TEST(FashionMNIST, ReadsTheTrainingSet) {
  if (!installed()) GTEST_SKIP() << "the Debian package dataset-fashion-mnist is not installed";
  expect_valid_split(installed_split(true), 60000);
}

TEST(FashionMNIST, LoadsInBatches) {
  if (!installed()) GTEST_SKIP() << "the Debian package dataset-fashion-mnist is not installed";
  auto test_set =
      std::shared_ptr<const FashionMNIST>(&installed_split(false), [](const FashionMNIST*) {});
  DataLoader loader(test_set, {.batch_size = 256, .shuffle = true, .seed = 1, .num_workers = 2});
  EXPECT_EQ(loader.num_batches(), 40);  // 39 full batches and one of 16
  auto b = loader.next();
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->arrays[0].shape(), Shape({256, 1, 28, 28}));
  EXPECT_EQ(b->arrays[1].shape(), Shape({256}));
  // The rows are the dataset's own.
  std::vector<float> x = to_vector<float>(b->arrays[0]);
  const int64_t first = b->indices[0];
  const float* src = test_set->images().data<float>() + first * 784;
  EXPECT_TRUE(std::equal(x.begin(), x.begin() + 784, src));
  EXPECT_EQ(FashionMNIST::text_labels()[9], "ankle boot");
}

// --- Fake files -------------------------------------------------------------------------------

/// An IDX file: magic, big-endian extents, data.
Bytes idx_file(uint32_t magic, const std::vector<uint32_t>& dims, const Bytes& data) {
  Bytes out;
  auto put32 = [&](uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<uint8_t>(v >> shift));
  };
  put32(magic);
  for (uint32_t d : dims) put32(d);
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

uint32_t crc32(const Bytes& data) {
  uint32_t crc = 0xffffffffu;
  for (uint8_t byte : data) {
    crc ^= byte;
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

/// A gzip stream (RFC 1952) holding `data` in stored deflate blocks (RFC 1951, no compression).
Bytes gzip(const Bytes& data) {
  Bytes out = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};
  auto put16 = [&](uint32_t v) {
    out.push_back(static_cast<uint8_t>(v));
    out.push_back(static_cast<uint8_t>(v >> 8));
  };
  size_t pos = 0;
  do {
    const size_t n = std::min<size_t>(data.size() - pos, 65535);
    const bool last = pos + n == data.size();
    out.push_back(last ? 1 : 0);
    put16(static_cast<uint32_t>(n));
    put16(static_cast<uint32_t>(~n & 0xffffu));
    out.insert(out.end(), data.begin() + static_cast<std::ptrdiff_t>(pos),
               data.begin() + static_cast<std::ptrdiff_t>(pos + n));
    pos += n;
  } while (pos < data.size());
  const uint32_t crc = crc32(data);
  const auto size = static_cast<uint32_t>(data.size());
  put16(crc & 0xffffu);
  put16(crc >> 16);
  put16(size & 0xffffu);
  put16(size >> 16);
  return out;
}

constexpr uint32_t kImagesMagic = 0x00000803;
constexpr uint32_t kLabelsMagic = 0x00000801;

/// Three 28x28 images (all 0, all 255, a ramp) and their labels.
Bytes fake_pixels(size_t images = 3) {
  Bytes px(images * 784, 0);
  for (size_t i = 0; i < 784 && images > 1; ++i) px[784 + i] = 255;
  for (size_t i = 0; i < 784 && images > 2; ++i) px[2 * 784 + i] = static_cast<uint8_t>(i % 256);
  return px;
}

class FakeFiles : public ::testing::Test {
 protected:
  std::string path(std::string_view name) const { return (root_ / name).string(); }

  void write(std::string_view name, const Bytes& bytes) const {
    std::ofstream f(root_ / name, std::ios::binary);
    f.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  }

  /// A valid test split, gzip-compressed; then `name` replaced by `bytes` when given.
  void write_split(const Bytes& images = idx_file(kImagesMagic, {3, 28, 28}, fake_pixels()),
                   const Bytes& labels = idx_file(kLabelsMagic, {3}, {0, 9, 4})) const {
    write("t10k-images-idx3-ubyte.gz", gzip(images));
    write("t10k-labels-idx1-ubyte.gz", gzip(labels));
  }

  /// The message of the E that loading the test split throws.
  template <typename E>
  std::string load_error() const {
    return error_of<E>([&] { FashionMNIST ds(root_.string(), /*train=*/false); });
  }

  const janus::testing::TempDir root_{janus::testing::test_scoped("janus_fmnist_")};
};

TEST_F(FakeFiles, ReadsAValidSmallSplit) {
  write_split();
  FashionMNIST ds(root_.string(), /*train=*/false);
  ASSERT_EQ(ds.size(), 3);
  std::vector<float> px = to_vector<float>(ds.images());
  EXPECT_EQ(px[0], 0.0f);
  EXPECT_EQ(px[784], 1.0f);
  EXPECT_FLOAT_EQ(px[2 * 784 + 51], 51.0f / 255.0f);
  EXPECT_EQ(to_vector<int32_t>(ds.labels()), (std::vector<int32_t>{0, 9, 4}));
}

TEST_F(FakeFiles, PlainIdxFilesAreReadToo) {
  write("plain.idx", idx_file(0x00000802, {2, 3}, {1, 2, 3, 4, 5, 6}));
  NDArray a = read_idx(path("plain.idx"));
  EXPECT_EQ(a.shape(), Shape({2, 3}));
  EXPECT_EQ(a.dtype(), DType::kUInt8);
  EXPECT_EQ(to_vector<int>(a), (std::vector<int>{1, 2, 3, 4, 5, 6}));
}

// Found by the idx fuzzer: extents 2^24 x 2^12 x 2^28 multiply to 2^64, which wraps to 0 in 64
// bits and slipped past the size limit into Shape, which threw a ShapeError, not a FormatError.
TEST_F(FakeFiles, ExtentsThatWrapOrHideBehindAZeroAreRefused) {
  write("wrap.idx", idx_file(0x00000803, {1u << 24, 1u << 12, 1u << 28}, {}));
  EXPECT_THAT(error_of<FormatError>([&] { read_idx(path("wrap.idx")); }),
              AllOf(HasSubstr(path("wrap.idx")), HasSubstr("extents 16777216, 4096"),
                    HasSubstr("announce more than 68719476736 bytes")));
  write("zero.idx", idx_file(0x00000803, {0, 0xffffffffu, 0xffffffffu}, {}));
  EXPECT_THAT(error_of<FormatError>([&] { read_idx(path("zero.idx")); }),
              HasSubstr("a zero extent counted as 1"));
  write("empty.idx", idx_file(0x00000802, {0, 28}, {}));
  EXPECT_EQ(read_idx(path("empty.idx")).shape(), Shape({0, 28}));
}

TEST_F(FakeFiles, MissingFileNamesThePathAndThePackage) {
  const std::string msg = load_error<IOError>();
  EXPECT_THAT(msg, AllOf(StartsWith("FashionMNIST (test set): "),
                         HasSubstr(path("t10k-images-idx3-ubyte.gz")), HasSubstr("does not exist"),
                         HasSubstr("dataset-fashion-mnist")));
  write_split();
  fs::remove(root_ / "t10k-labels-idx1-ubyte.gz");
  EXPECT_THAT(load_error<IOError>(), HasSubstr(path("t10k-labels-idx1-ubyte.gz")));
  EXPECT_THAT(
      error_of<IOError>([&] { FashionMNIST ds(path("nowhere"), /*train=*/true); }),
      AllOf(StartsWith("FashionMNIST (train set): "), HasSubstr("train-images-idx3-ubyte.gz")));
  EXPECT_THAT(error_of<IOError>([&] { read_idx(path("absent.gz")); }),
              AllOf(HasSubstr(path("absent.gz")), HasSubstr("cannot open")));
}

TEST_F(FakeFiles, BadMagicNumbers) {
  write_split(idx_file(0x12345678, {3, 28, 28}, fake_pixels()));
  EXPECT_THAT(load_error<FormatError>(), AllOf(HasSubstr(path("t10k-images-idx3-ubyte.gz")),
                                               HasSubstr("bad magic number 0x12345678")));
  // Labels where images belong: a valid IDX file of the wrong rank.
  write_split(idx_file(kLabelsMagic, {3}, {0, 1, 2}));
  EXPECT_THAT(load_error<FormatError>(),
              AllOf(HasSubstr(path("t10k-images-idx3-ubyte.gz")), HasSubstr("shape [3]"),
                    HasSubstr("expected 3 dimensions")));
  write_split(idx_file(kImagesMagic, {3, 28, 28}, fake_pixels()),
              idx_file(kImagesMagic, {3, 28, 28}, fake_pixels()));
  EXPECT_THAT(load_error<FormatError>(), AllOf(HasSubstr(path("t10k-labels-idx1-ubyte.gz")),
                                               HasSubstr("expected 1 dimension")));
  write_split(idx_file(0x00000d03, {3, 28, 28}, fake_pixels()));
  EXPECT_THAT(load_error<FormatError>(), HasSubstr("element type 0x0d, only 0x08"));
  // Not an IDX file at all (and not gzip either: zlib passes it through).
  write("t10k-images-idx3-ubyte.gz", Bytes{'h', 'e', 'l', 'l', 'o', '\n'});
  EXPECT_THAT(load_error<FormatError>(), HasSubstr("bad magic number 0x68656c6c"));
}

TEST_F(FakeFiles, WrongDimensionsAndCounts) {
  write_split(idx_file(kImagesMagic, {3, 27, 28}, Bytes(3 * 27 * 28)));
  EXPECT_THAT(load_error<FormatError>(), HasSubstr("images of 27x28 pixels, expected 28x28"));
  write_split(idx_file(kImagesMagic, {3, 28, 28}, fake_pixels()),
              idx_file(kLabelsMagic, {2}, {0, 1}));
  EXPECT_THAT(load_error<FormatError>(),
              AllOf(HasSubstr("holds 3 images but"), HasSubstr("holds 2 labels")));
  write_split(idx_file(kImagesMagic, {3, 28, 28}, fake_pixels()),
              idx_file(kLabelsMagic, {3}, {0, 10, 1}));
  EXPECT_THAT(load_error<FormatError>(), HasSubstr("label 10 of sample 1 is outside [0, 9]"));
}

TEST_F(FakeFiles, TruncatedFiles) {
  // The data stops early (a complete gzip stream of a short IDX file).
  Bytes images = idx_file(kImagesMagic, {3, 28, 28}, fake_pixels());
  images.resize(images.size() - 100);
  write_split(images);
  EXPECT_THAT(
      load_error<FormatError>(),
      AllOf(HasSubstr(path("t10k-images-idx3-ubyte.gz")),
            HasSubstr("truncated: 2252 bytes of data, expected 2352 for shape [3, 28, 28]")));
  // The header stops early.
  write_split(Bytes{0, 0, 8, 3, 0, 0});
  EXPECT_THAT(load_error<FormatError>(),
              HasSubstr("truncated header: 2 bytes of extents, expected 12"));
  write_split(Bytes{0, 0});
  EXPECT_THAT(load_error<FormatError>(), HasSubstr("truncated: 2 bytes, expected at least 4"));
  // The gzip stream itself is cut: in the data, and just before its trailer.
  Bytes gz = gzip(idx_file(kImagesMagic, {3, 28, 28}, fake_pixels()));
  write("t10k-labels-idx1-ubyte.gz", gzip(idx_file(kLabelsMagic, {3}, {0, 9, 4})));
  write("t10k-images-idx3-ubyte.gz", Bytes(gz.begin(), gz.begin() + 1000));
  EXPECT_THAT(load_error<FormatError>(), AllOf(HasSubstr(path("t10k-images-idx3-ubyte.gz")),
                                               HasSubstr("truncated gzip stream")));
  write("t10k-images-idx3-ubyte.gz", Bytes(gz.begin(), gz.end() - 8));
  EXPECT_THAT(load_error<FormatError>(), HasSubstr("truncated gzip stream"));
}

TEST_F(FakeFiles, CorruptFiles) {
  // A wrong checksum in the gzip trailer.
  Bytes gz = gzip(idx_file(kLabelsMagic, {3}, {0, 9, 4}));
  gz[gz.size() - 8] ^= 0xff;
  write_split();
  write("t10k-labels-idx1-ubyte.gz", gz);
  EXPECT_THAT(load_error<FormatError>(),
              AllOf(HasSubstr(path("t10k-labels-idx1-ubyte.gz")), HasSubstr("corrupt gzip stream"),
                    HasSubstr("incorrect data check")));
  // A deflate block with an invalid type.
  Bytes bad = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 0x07, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  write("t10k-labels-idx1-ubyte.gz", bad);
  EXPECT_THAT(load_error<FormatError>(), HasSubstr("corrupt gzip stream"));
  // Bytes after the announced data.
  write_split(idx_file(kImagesMagic, {3, 28, 28}, fake_pixels()),
              idx_file(kLabelsMagic, {3}, {0, 9, 4, 4}));
  EXPECT_THAT(load_error<FormatError>(),
              AllOf(HasSubstr(path("t10k-labels-idx1-ubyte.gz")), HasSubstr("trailing bytes")));
}

}  // namespace
}  // namespace janus::data
