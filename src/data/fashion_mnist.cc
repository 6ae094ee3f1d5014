// Fashion-MNIST: reads the image and label IDX files of one split, checks that they describe
// the same samples, and converts them to float32 images in [0, 1] and int32 labels.
#include "janus/data/fashion_mnist.h"

#include <filesystem>

#include "janus/base/error.h"
#include "janus/data/idx.h"
#include "janus/engine/array.h"

namespace janus::data {
namespace {

constexpr int64_t kSide = 28;
constexpr int kNumClasses = 10;

std::string split_path(const std::string& root, bool train, std::string_view kind) {
  return (std::filesystem::path(root) / fmt::format("{}-{}", train ? "train" : "t10k", kind))
      .string();
}

NDArray read_split_file(const std::string& path) {
  std::error_code ec;
  JANUS_CHECK(std::filesystem::exists(path, ec), IOError,
              "'{}' does not exist; the Debian package dataset-fashion-mnist "
              "provides the files in {} (scripts/install-deps.sh installs it), or pass the "
              "folder that holds them as root",
              path, kFashionMNISTRoot);
  return read_idx(path);
}

std::vector<NDArray> load_split(const std::string& root, bool train) {
  const std::string images_path = split_path(root, train, "images-idx3-ubyte.gz");
  const std::string labels_path = split_path(root, train, "labels-idx1-ubyte.gz");
  NDArray raw_images = read_split_file(images_path);
  NDArray raw_labels = read_split_file(labels_path);

  JANUS_CHECK(raw_images.ndim() == 3, FormatError,
              "'{}' holds an array of shape {}, expected 3 dimensions "
              "[images, 28, 28] (magic number 0x00000803)",
              images_path, raw_images.shape());
  JANUS_CHECK(raw_images.shape()[1] == kSide && raw_images.shape()[2] == kSide, FormatError,
              "'{}' holds images of {}x{} pixels, expected 28x28", images_path,
              raw_images.shape()[1], raw_images.shape()[2]);
  JANUS_CHECK(raw_labels.ndim() == 1, FormatError,
              "'{}' holds an array of shape {}, expected 1 dimension [labels] "
              "(magic number 0x00000801)",
              labels_path, raw_labels.shape());
  const int64_t n = raw_images.shape()[0];
  JANUS_CHECK(raw_labels.shape()[0] == n, FormatError,
              "'{}' holds {} images but '{}' holds {} labels; expected one label "
              "per image",
              images_path, n, labels_path, raw_labels.shape()[0]);

  // read_idx returns new host arrays with nothing pending, and so do these: fill them directly.
  NDArray labels = empty({n}, DType::kInt32, cpu());
  const auto* label_bytes = raw_labels.data<uint8_t>();
  auto* label_out = labels.data<int32_t>();
  for (int64_t i = 0; i < n; ++i) {
    JANUS_CHECK(label_bytes[i] < kNumClasses, FormatError,
                "'{}': label {} of sample {} is outside [0, 9]", labels_path, label_bytes[i], i);
    label_out[i] = label_bytes[i];
  }

  NDArray images = empty({n, 1, kSide, kSide}, DType::kFloat32, cpu());
  const auto* pixels = raw_images.data<uint8_t>();
  auto* out = images.data<float>();
  const int64_t count = images.size();
  for (int64_t i = 0; i < count; ++i) out[i] = static_cast<float>(pixels[i]) / 255.0f;
  return {images, labels};
}

// Every error names the component and split first: "FashionMNIST (train set): ...".
std::vector<NDArray> load_split_with_context(const std::string& root, bool train) {
  try {
    return load_split(root, train);
  } catch (Error& e) {
    e.add_context(fmt::format("FashionMNIST ({} set)", train ? "train" : "test"));
    throw;
  }
}

}  // namespace

FashionMNIST::FashionMNIST(const std::string& root, bool train)
    : ArrayDataset(load_split_with_context(root, train)) {}

const std::array<std::string_view, 10>& FashionMNIST::text_labels() {
  static constexpr std::array<std::string_view, 10> kNames = {
      "t-shirt", "trouser", "pullover", "dress", "coat",
      "sandal",  "shirt",   "sneaker",  "bag",   "ankle boot"};
  return kNames;
}

}  // namespace janus::data
