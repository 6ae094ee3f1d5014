// Fashion-MNIST (Zalando): 28x28 grey images of clothes in 10 classes, 60000 to train on and
// 10000 to test. Layer: data.
#pragma once

#include <array>
#include <string>
#include <string_view>

#include "janus/data/dataset.h"

namespace janus::data {

/// Where the Debian package `dataset-fashion-mnist` installs the files.
inline constexpr std::string_view kFashionMNISTRoot = "/usr/share/datasets/fashion-mnist";

/// The Fashion-MNIST training set (`train`) or test set, read from the four IDX files in `root`
/// (train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz, t10k-images-idx3-ubyte.gz,
/// t10k-labels-idx1-ubyte.gz). A sample is {image, label}:
///   - image: float32 [1, 28, 28] (channel, height, width), the pixel bytes divided by 255, so
///     in [0, 1] with 0 the background;
///   - label: int32 scalar in [0, 9] (names in `text_labels()`).
/// The whole set is read and converted once, by the constructor (the training images take
/// 188 MB as float32). For other preprocessing, wrap it in a TransformDataset.
///
/// Throws IOError when a file is missing or unreadable (the message names the path and the
/// Debian package that provides the files), FormatError when a file is corrupt: wrong magic
/// number, image size other than 28x28, image and label counts that differ, a label outside
/// [0, 9], truncated data (the message names the path and what is wrong).
class FashionMNIST : public ArrayDataset {
 public:
  explicit FashionMNIST(const std::string& root = std::string(kFashionMNISTRoot),
                        bool train = true);

  /// float32 [N, 1, 28, 28] in [0, 1].
  const NDArray& images() const { return arrays()[0]; }
  /// int32 [N] in [0, 9].
  const NDArray& labels() const { return arrays()[1]; }

  /// Class names by label: "t-shirt", "trouser", "pullover", "dress", "coat", "sandal",
  /// "shirt", "sneaker", "bag", "ankle boot" (as d2l.ai names them).
  static const std::array<std::string_view, 10>& text_labels();
};

}  // namespace janus::data
