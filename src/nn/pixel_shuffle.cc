// PixelShuffle: channels regrouped into blocks of pixels (a reshape, a transpose, a reshape).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "janus/base/error.h"
#include "janus/nn/layers.h"
#include "janus/ops/ops.h"

namespace janus::nn {

PixelShuffle::PixelShuffle(int dims, std::vector<int64_t> factors) : Block("pixelshuffle") {
  const auto n = static_cast<size_t>(dims);
  JANUS_CHECK(factors.size() == 1 || factors.size() == n, ValueError,
              "PixelShuffle{}D: factor has {} values [{}], expected 1 or {}", dims, factors.size(),
              fmt::join(factors, ", "), dims);
  factors_ = factors.size() == 1 ? std::vector<int64_t>(n, factors[0]) : factors;
  for (int64_t f : factors_) {
    JANUS_CHECK(f >= 1, ValueError, "PixelShuffle{}D: factor is [{}], expected values >= 1", dims,
                fmt::join(factors, ", "));
  }
}

NDArray PixelShuffle::forward(const NDArray& x) {
  const auto d = static_cast<int64_t>(factors_.size());
  JANUS_CHECK(x.ndim() == d + 2, ShapeError,
              "{}: input has shape {}, expected {} dimensions [batch, channels, {} spatial]",
              name(), x.shape(), d + 2, d);
  int64_t block = 1;
  for (int64_t f : factors_) block *= f;
  const Shape& s = x.shape();
  JANUS_CHECK(s[1] % block == 0, ShapeError,
              "{}: input of shape {} has {} channels, expected a multiple of {} (the product of "
              "the factors [{}])",
              name(), s, s[1], block, fmt::join(factors_, ", "));
  // [N, C, f1..fd, s1..sd] -> [N, C, s1, f1, ..., sd, fd] -> [N, C, s1 * f1, ..., sd * fd].
  std::vector<int64_t> split{s[0], s[1] / block};
  split.insert(split.end(), factors_.begin(), factors_.end());
  std::vector<int64_t> perm{0, 1}, merged{s[0], s[1] / block};
  for (int64_t i = 0; i < d; ++i) {
    split.push_back(s[i + 2]);
    perm.push_back(2 + d + i);
    perm.push_back(2 + i);
    merged.push_back(s[i + 2] * factors_[static_cast<size_t>(i)]);
  }
  return reshape(transpose(reshape(x, Shape(std::move(split))), std::move(perm)),
                 Shape(std::move(merged)));
}

std::string PixelShuffle::describe() const {
  return fmt::format("PixelShuffle{}D({})", factors_.size(), fmt::join(factors_, ", "));
}

}  // namespace janus::nn
