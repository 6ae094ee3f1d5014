// Initializers: how a parameter's first value is drawn. Layer: nn.
#pragma once

#include <memory>
#include <string>

#include "janus/core/ndarray.h"

namespace janus::nn {

/// Makes the first value of a parameter of `shape`. Draws from the seeded generator
/// (janus::seed), so a model initialised after the same seed starts from the same values.
class Initializer {
 public:
  virtual ~Initializer() = default;
  virtual NDArray make(const Shape& shape, DType dtype, Device device) const = 0;
  /// E.g. "Xavier(uniform, avg, 3)", for errors and printing.
  virtual std::string describe() const = 0;
};
using InitializerPtr = std::shared_ptr<const Initializer>;

/// Every element `value`.
InitializerPtr Constant(double value);
InitializerPtr Zero();
InitializerPtr One();
/// Uniform in [-scale, scale] (Gluon's default for weights: 0.07).
InitializerPtr Uniform(double scale = 0.07);
/// Normal with mean 0 and standard deviation `sigma`.
InitializerPtr Normal(double sigma = 0.01);

enum class XavierRandom : uint8_t { kUniform, kGaussian };
enum class XavierFactor : uint8_t { kAvg, kIn, kOut };
/// Glorot/Xavier: variance magnitude / factor with factor the fan-in, fan-out or their mean
/// (fan-in of [out, in, k...] is in * prod(k)); uniform in [-sqrt(3 var), sqrt(3 var)] or
/// normal with that variance. Arrays of fewer than 2 dimensions are an error naming the shape.
InitializerPtr Xavier(XavierRandom rnd = XavierRandom::kUniform,
                      XavierFactor factor = XavierFactor::kAvg, double magnitude = 3.0);

}  // namespace janus::nn
