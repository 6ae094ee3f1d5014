// safetensors files: round trips of every dtype, the byte layout, files written by hand, every
// kind of malformed file, and a block's parameters with their errors.
#include "janus/nn/serialization.h"

#include <fmt/ranges.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "janus/engine/array.h"
#include "janus/nn/block.h"
#include "janus/nn/layers.h"
#include "janus/ops/ops.h"

#include "testing/test_util.h"

namespace janus::nn {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string temp_path(const std::string& name) {
  return fmt::format("{}janus_serialization_test_{}_{}", ::testing::TempDir(), getpid(), name);
}

std::vector<char> bytes_of(const NDArray& a) {
  std::vector<char> out(a.nbytes());
  if (!out.empty()) copy_to_host(a, out.data(), a.dtype());
  return out;
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_all(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// A file with the given header text and data bytes.
std::string file_of(const std::string& header, const std::string& data) {
  const uint64_t n = header.size();
  std::string out(8, '\0');
  std::memcpy(out.data(), &n, 8);
  return out + header + data;
}

std::string floats(std::initializer_list<float> values) {
  std::string out(values.size() * 4, '\0');
  std::memcpy(out.data(), values.begin(), out.size());
  return out;
}

// "{e1, e2, ...}": a header from entries.
std::string object_of(std::initializer_list<std::string> entries) {
  return fmt::format("{{{}}}", fmt::join(entries, ", "));
}

class SafetensorsFile : public ::testing::Test {
 protected:
  void TearDown() override { std::filesystem::remove(path_); }
  // Writes `bytes` and returns the FormatError message of loading it.
  std::string format_error(const std::string& bytes) {
    write_all(path_, bytes);
    return error_of<FormatError>([&] { load_safetensors(path_); });
  }
  std::string path_ = temp_path("file.safetensors");
};

TEST_F(SafetensorsFile, RoundTripsEveryDTypeBitForBit) {
  seed(9);
  NamedArrays arrays = {
      {"f32", random_normal(0, 1, {3, 4})},
      {"f64", random_normal(0, 1, {5}, DType::kFloat64)},
      {"f16", cast(random_normal(0, 1, {2, 3}), DType::kFloat16)},
      {"bf16", cast(random_normal(0, 1, {7}), DType::kBFloat16)},
      {"i32", randint(-100, 100, {4}, DType::kInt32)},
      {"i64", randint(-100, 100, {2, 2}, DType::kInt64)},
      {"u8", randint(0, 255, {9}, DType::kUInt8)},
      {"bool", cast(randint(0, 2, {5}, DType::kInt32), DType::kBool)},
      {"scalar", full({}, 3.5)},
      {"empty", zeros({0, 3})},
  };
  save_safetensors(path_, arrays, {{"kind", "test"}, {"note", "\"quoted\" \n text"}});
  Metadata meta;
  const NamedArrays loaded = load_safetensors(path_, &meta);
  EXPECT_THAT(meta,
              ElementsAre(std::pair<const std::string, std::string>{"kind", "test"},
                          std::pair<const std::string, std::string>{"note", "\"quoted\" \n text"}));
  ASSERT_EQ(loaded.size(), arrays.size());
  for (size_t i = 0; i < arrays.size(); ++i) {
    SCOPED_TRACE(arrays[i].first);
    EXPECT_EQ(loaded[i].first, arrays[i].first);  // file order is the order given
    EXPECT_EQ(loaded[i].second.shape(), arrays[i].second.shape());
    EXPECT_EQ(loaded[i].second.dtype(), arrays[i].second.dtype());
    EXPECT_EQ(bytes_of(loaded[i].second), bytes_of(arrays[i].second));
  }
}

TEST_F(SafetensorsFile, HasTheDocumentedLayout) {
  save_safetensors(path_,
                   {{"w", from_vector<float>({1, 2, 3}, {3})}, {"b", zeros({1}, DType::kFloat64)}});
  const std::string bytes = read_all(path_);
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  EXPECT_EQ(n % 8, 0u);  // the data starts aligned
  EXPECT_EQ(bytes.size(), 8 + n + 12 + 8);
  const std::string header = bytes.substr(8, n);
  EXPECT_THAT(header, HasSubstr(R"("w":{"dtype":"F32","shape":[3],"data_offsets":[0,12]})"));
  EXPECT_THAT(header, HasSubstr(R"("b":{"dtype":"F64","shape":[1],"data_offsets":[12,20]})"));
  EXPECT_EQ(bytes.substr(8 + n, 12), floats({1, 2, 3}));
}

TEST_F(SafetensorsFile, ReadsAFileWrittenByHand) {
  // As another writer may lay it out: metadata last, arrays out of name order, no padding.
  const std::string header =
      R"({"z":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
      R"("a":{"dtype":"F32","shape":[1,1],"data_offsets":[8,12]},"__metadata__":{"format":"pt"}})";
  write_all(path_, file_of(header, floats({1.5f, -2.0f, 7.0f})));
  Metadata meta;
  const NamedArrays arrays = load_safetensors(path_, &meta);
  ASSERT_EQ(arrays.size(), 2u);
  EXPECT_EQ(arrays[0].first, "z");
  EXPECT_EQ(to_vector<float>(arrays[0].second), (std::vector<float>{1.5f, -2.0f}));
  EXPECT_EQ(arrays[1].first, "a");
  EXPECT_EQ(arrays[1].second.shape(), (Shape{1, 1}));
  EXPECT_EQ(meta.at("format"), "pt");
}

TEST_F(SafetensorsFile, MissingFileIsAnIOErrorNamingThePath) {
  const std::string missing = temp_path("does_not_exist.safetensors");
  EXPECT_THAT(
      error_of<IOError>([&] { load_safetensors(missing); }),
      HasSubstr("load_safetensors: cannot open '" + missing + "': No such file or directory"));
  EXPECT_THAT(error_of<IOError>([&] { load_safetensors(::testing::TempDir()); }),
              HasSubstr("it is a directory"));
  EXPECT_THAT(error_of<IOError>([&] { save_safetensors("/nonexistent_dir/x.safetensors", {}); }),
              HasSubstr("save_safetensors: cannot write '/nonexistent_dir/x.safetensors'"));
}

TEST_F(SafetensorsFile, TruncatedFilesAreFormatErrors) {
  save_safetensors(path_, {{"w", from_vector<float>({1, 2, 3, 4}, {4})}});
  const std::string good = read_all(path_);
  std::string msg = format_error(good.substr(0, 5));
  EXPECT_THAT(msg, HasSubstr("load_safetensors: '" + path_ + "': the file has 5 bytes, too few"));
  msg = format_error(good.substr(0, 20));
  EXPECT_THAT(msg, HasSubstr("': the header length is"));
  EXPECT_THAT(msg, HasSubstr("but only 12 follow the length field (truncated file?)"));
  msg = format_error(good.substr(0, good.size() - 3));
  EXPECT_THAT(msg, HasSubstr("array 'w': data_offsets [0, 16] are out of range, expected 0 <= "
                             "begin <= end <= 13"));
  std::string huge = good;
  huge[7] = '\x7f';
  EXPECT_THAT(format_error(huge), HasSubstr("more than the 100000000 allowed"));
}

TEST_F(SafetensorsFile, MalformedHeadersAreFormatErrors) {
  const std::string data = floats({1, 2});
  EXPECT_THAT(format_error(file_of("{not json", data)),
              HasSubstr("': the header is not valid JSON ("));
  EXPECT_THAT(format_error(file_of("[1, 2]", data)),
              HasSubstr("the header is a JSON array, expected an object"));
  EXPECT_THAT(format_error(file_of(R"({"w": [1]})", data)),
              HasSubstr("array 'w' is a JSON array, expected an object with dtype, shape and "
                        "data_offsets"));
  EXPECT_THAT(format_error(file_of(R"({"w": {"dtype": "F32", "shape": [2]}})", data)),
              HasSubstr("array 'w' has no data_offsets"));
  EXPECT_THAT(
      format_error(
          file_of(R"({"w": {"dtype": "I16", "shape": [4], "data_offsets": [0, 8]}})", data)),
      HasSubstr("array 'w' has dtype 'I16', which Janus does not support (expected one of F32, "
                "F64, F16, BF16, I32, I64, U8, BOOL)"));
  EXPECT_THAT(format_error(file_of(
                  R"({"w": {"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]}})", data)),
              HasSubstr("array 'w': shape holds -2, expected non-negative integers"));
  EXPECT_THAT(
      format_error(file_of(R"({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0]}})", data)),
      HasSubstr("array 'w': data_offsets is [0], expected [begin, end]"));
  EXPECT_THAT(format_error(file_of(R"({"w": {"dtype": "F32", "shape": [2], "data_offsets": )"
                                   R"([0, 8]}, "w": {"dtype": "F32", "shape": [0], )"
                                   R"("data_offsets": [8, 8]}})",
                                   data)),
              HasSubstr("the header names 'w' twice"));
  EXPECT_THAT(format_error(file_of(R"({"__metadata__": {"a": 1}})", "")),
              HasSubstr("__metadata__ value of 'a' is a JSON number, expected a string"));
  EXPECT_THAT(format_error(file_of(R"({"w": {"dtype": "F32", "shape": [[[[[1]]]]]}})", data)),
              HasSubstr("the header nests deeper than 4 levels"));
}

TEST_F(SafetensorsFile, OffsetsMustMatchTheDataExactly) {
  const std::string data = floats({1, 2, 3, 4});
  auto entry = [](const char* name, const char* shape, int begin, int end) {
    return fmt::format(R"("{}": {{"dtype": "F32", "shape": {}, "data_offsets": [{}, {}]}})", name,
                       shape, begin, end);
  };
  EXPECT_THAT(format_error(file_of(object_of({entry("w", "[4]", 0, 20)}), data)),
              HasSubstr("array 'w': data_offsets [0, 20] are out of range, expected 0 <= begin "
                        "<= end <= 16"));
  EXPECT_THAT(format_error(file_of(object_of({entry("w", "[4]", 12, 8)}), data)),
              HasSubstr("data_offsets [12, 8] are out of range"));
  EXPECT_THAT(format_error(file_of(object_of({entry("w", "[3]", 0, 16)}), data)),
              HasSubstr("array 'w': data_offsets [0, 16] span 16 bytes, but F32 x [3] needs 12"));
  EXPECT_THAT(
      format_error(file_of(object_of({entry("w", "[4611686018427387904, 8]", 0, 16)}), data)),
      HasSubstr("needs more than 2^64"));
  EXPECT_THAT(
      format_error(file_of(object_of({entry("a", "[3]", 0, 12), entry("b", "[2]", 8, 16)}), data)),
      HasSubstr("arrays 'a' and 'b' overlap (bytes [0, 12) and [8, 16))"));
  EXPECT_THAT(
      format_error(file_of(object_of({entry("a", "[1]", 0, 4), entry("b", "[2]", 8, 16)}), data)),
      HasSubstr("bytes [4, 8) of the data belong to no array"));
  EXPECT_THAT(format_error(file_of(object_of({entry("a", "[3]", 0, 12)}), data)),
              HasSubstr("bytes [12, 16) of the data belong to no array"));
  const std::string bools =
      file_of(R"({"m": {"dtype": "BOOL", "shape": [3], "data_offsets": [0, 3]}})",
              std::string("\1\0\2", 3));
  EXPECT_THAT(format_error(bools),
              HasSubstr("array 'm' (BOOL) holds byte 2 at element 2, expected 0 or 1"));
}

// Seeded random corruptions of a valid file (flipped bytes, truncations): each load either
// succeeds or raises a FormatError; nothing crashes (run under AddressSanitizer too).
TEST_F(SafetensorsFile, RandomCorruptionsAreFormatErrorsNeverCrashes) {
  save_safetensors(path_,
                   {{"w", from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3})},
                    {"m", from_vector<uint8_t>({1, 0, 1}, {3}, DType::kBool)},
                    {"i", from_vector<int64_t>({7, 8}, {2})}},
                   {{"k", "v"}});
  const std::string good = read_all(path_);
  std::mt19937 rng(1234);
  int loaded = 0, refused = 0;
  for (int trial = 0; trial < 400; ++trial) {
    std::string bad = good;
    if (trial % 4 == 0) {
      bad.resize(std::uniform_int_distribution<size_t>(0, good.size() - 1)(rng));
    } else {
      const int flips = std::uniform_int_distribution<int>(1, 3)(rng);
      for (int f = 0; f < flips; ++f) {
        bad[std::uniform_int_distribution<size_t>(0, bad.size() - 1)(rng)] =
            static_cast<char>(std::uniform_int_distribution<int>(0, 255)(rng));
      }
    }
    write_all(path_, bad);
    try {
      load_safetensors(path_);
      ++loaded;
    } catch (const FormatError& e) {
      ++refused;
      ASSERT_THAT(e.what(), HasSubstr(path_)) << "trial " << trial;
    }
  }
  EXPECT_GT(refused, 100);
  EXPECT_EQ(loaded + refused, 400);
}

TEST_F(SafetensorsFile, SaveRefusesBadNames) {
  EXPECT_THAT(error_of<ValueError>([&] {
                save_safetensors(path_, {{"a", zeros({1})}, {"a", zeros({1})}});
              }),
              HasSubstr("array name 'a' appears twice"));
  EXPECT_THAT(error_of<ValueError>([&] {
                save_safetensors(path_, {{"__metadata__", zeros({1})}});
              }),
              HasSubstr("array name '__metadata__' is reserved or empty"));
  EXPECT_FALSE(std::filesystem::exists(path_));
}

TEST_F(SafetensorsFile, AnArrayWhoseKernelFailedLeavesNoFileBehind) {
  save_safetensors(path_, {{"old", zeros({1})}});
  // A label out of range: the kernel throws at the wait point, here inside the save.
  const NDArray bad = softmax_cross_entropy(zeros({1, 3}), from_vector<int64_t>({7}, {1}));
  EXPECT_THAT(error_of<IndexError>([&] {
                save_safetensors(path_, {{"loss", bad}});
              }),
              HasSubstr("softmax_cross_entropy"));
  EXPECT_FALSE(std::filesystem::exists(path_ + ".tmp"));
  EXPECT_EQ(load_safetensors(path_).front().first, "old");  // the previous file is intact
}

std::shared_ptr<Sequential> mlp(int64_t in_units, int64_t hidden = 4) {
  auto net = std::make_shared<Sequential>();
  net->add(std::make_shared<Dense>(hidden, "relu", true, true, in_units),
           std::make_shared<Dense>(2));
  return net;
}

class Parameters : public SafetensorsFile {};

TEST_F(Parameters, RoundTripGivesDeferredParametersTheirShapes) {
  seed(3);
  auto net = mlp(3);
  net->initialize(Xavier());
  const NDArray x = random_normal(0, 1, {5, 3});
  const std::vector<float> y = to_vector<float>((*net)(x));
  save_parameters(*net, path_);
  EXPECT_EQ(load_safetensors(path_).size(), 4u);

  auto fresh = mlp(/*in_units=*/0);  // every shape deferred
  fresh->initialize(Xavier());
  load_parameters(*fresh, path_);
  EXPECT_EQ(fresh->collect_params().at("0.weight")->shape(), (Shape{4, 3}));
  EXPECT_EQ(to_vector<float>((*fresh)(x)), y);
  auto never_initialised = mlp(0);
  load_parameters(*never_initialised, path_, cpu());
  EXPECT_EQ(to_vector<float>((*never_initialised)(x)), y);
}

TEST_F(Parameters, MissingUnexpectedAndMisshapedParametersAreNamed) {
  auto net = mlp(3);
  net->initialize(Constant(0.5));
  (*net)(ones({1, 3}));  // the second layer's input size
  save_parameters(*net, path_);

  auto bigger = std::make_shared<Sequential>();
  bigger->add(mlp(3));
  bigger->add(std::make_shared<Dense>(1));
  std::string msg = error_of<ValueError>([&] { load_parameters(*bigger, path_); });
  EXPECT_THAT(msg, HasSubstr("load_parameters: '" + path_ +
                             "': it has no values for parameter(s) "
                             "0.0.weight, 0.0.bias, 0.1.weight, 0.1.bias of " +
                             bigger->name()));
  EXPECT_THAT(msg, HasSubstr("; it holds value(s) for 0.weight, 0.bias, which " + bigger->name() +
                             " does not have"));
  EXPECT_THAT(msg, HasSubstr("(pass ignore_extra=true to skip them)"));

  auto one_layer = std::make_shared<Sequential>();
  one_layer->add(std::make_shared<Dense>(4, "relu", true, true, 3));
  msg = error_of<ValueError>([&] { load_parameters(*one_layer, path_); });
  EXPECT_THAT(msg, HasSubstr("it holds value(s) for 1.weight, 1.bias, which " + one_layer->name() +
                             " does not have; its parameters are 0.weight, 0.bias"));
  EXPECT_THAT(msg, ::testing::Not(HasSubstr("no values for")));
  load_parameters(*one_layer, path_, std::nullopt, false, /*ignore_extra=*/true);
  EXPECT_EQ(to_vector<float>(one_layer->collect_params().at("0.weight")->data()),
            std::vector<float>(12, 0.5f));

  auto three = std::make_shared<Sequential>();
  three->add(std::make_shared<Dense>(4, "relu", true, true, 3), std::make_shared<Dense>(2),
             std::make_shared<Dense>(1, "", true, true, 2));
  three->initialize(Constant(2.0));
  msg = error_of<ValueError>([&] { load_parameters(*three, path_); });
  EXPECT_THAT(msg, HasSubstr("it has no values for parameter(s) 2.weight, 2.bias of"));
  EXPECT_THAT(msg, HasSubstr("(pass allow_missing=true to keep their current values)"));
  load_parameters(*three, path_, std::nullopt, /*allow_missing=*/true);
  EXPECT_EQ(to_vector<float>(three->collect_params().at("2.weight")->data()),
            std::vector<float>(2, 2.0f));
  EXPECT_EQ(to_vector<float>(three->collect_params().at("0.weight")->data()),
            std::vector<float>(12, 0.5f));

  auto wider = mlp(5, /*hidden=*/6);
  wider->initialize(Constant(1.0));
  msg = error_of<ShapeError>([&] { load_parameters(*wider, path_); });
  EXPECT_THAT(msg, HasSubstr("load_parameters: '" + path_ +
                             "': shapes differ (0: not known yet): "
                             "'0.weight' is [6, 5] in " +
                             wider->name() + " but [4, 3] in the file; '0.bias' is [6] in"));
  // Nothing was changed by the failed loads.
  EXPECT_EQ(to_vector<float>(wider->collect_params().at("0.weight")->data()),
            std::vector<float>(30, 1.0f));
  EXPECT_FALSE(wider->collect_params().at("1.weight")->initialized());
}

TEST_F(Parameters, SavingAnUninitialisedBlockNamesTheParameter) {
  auto net = mlp(0);
  EXPECT_THAT(
      error_of<ValueError>([&] { save_parameters(*net, path_); }),
      HasSubstr("save_parameters: '" + path_ + "': parameter '0.weight' (" + (*net)[0]->name() +
                "_weight) has nothing to save: it has not been "
                "initialised"));
  net->initialize(Xavier());
  EXPECT_THAT(error_of<ValueError>([&] { save_parameters(*net, path_); }),
              HasSubstr("has nothing to save: its shape [4, 0] has unknown (0) extents; run one "
                        "forward pass first"));
  EXPECT_FALSE(std::filesystem::exists(path_));
}

TEST_F(Parameters, LoadingAMalformedFileNamesIt) {
  write_all(path_, "garbage");
  EXPECT_THAT(error_of<FormatError>([&] { load_parameters(*mlp(3), path_); }),
              HasSubstr("load_safetensors: '" + path_ + "': the file has 7 bytes"));
}

}  // namespace
}  // namespace janus::nn
