// The built-in initializers.
#include "janus/nn/initializer.h"

#include <fmt/format.h>

#include <cmath>

#include "janus/base/error.h"
#include "janus/ops/ops.h"

namespace janus::nn {
namespace {

class ConstantInit final : public Initializer {
 public:
  explicit ConstantInit(double v) : value_(v) {}
  NDArray make(const Shape& shape, DType dtype, Device device) const override {
    return full(shape, value_, dtype, device);
  }
  std::string describe() const override { return fmt::format("Constant({})", value_); }

 private:
  double value_;
};

class UniformInit final : public Initializer {
 public:
  explicit UniformInit(double scale) : scale_(scale) {}
  NDArray make(const Shape& shape, DType dtype, Device device) const override {
    return random_uniform(-scale_, scale_, shape, dtype, device);
  }
  std::string describe() const override { return fmt::format("Uniform({})", scale_); }

 private:
  double scale_;
};

class NormalInit final : public Initializer {
 public:
  explicit NormalInit(double sigma) : sigma_(sigma) {}
  NDArray make(const Shape& shape, DType dtype, Device device) const override {
    return random_normal(0.0, sigma_, shape, dtype, device);
  }
  std::string describe() const override { return fmt::format("Normal({})", sigma_); }

 private:
  double sigma_;
};

class XavierInit final : public Initializer {
 public:
  XavierInit(XavierRandom rnd, XavierFactor factor, double magnitude)
      : rnd_(rnd), factor_(factor), magnitude_(magnitude) {}

  NDArray make(const Shape& shape, DType dtype, Device device) const override {
    JANUS_CHECK(shape.ndim() >= 2, ValueError,
                "{}: cannot initialise an array of shape {}, expected at least 2 dimensions "
                "[out, in, ...] to compute the fan-in and fan-out",
                describe(), shape);
    double receptive = 1;
    for (int i = 2; i < shape.ndim(); ++i) receptive *= static_cast<double>(shape[i]);
    const double fan_in = static_cast<double>(shape[1]) * receptive;
    const double fan_out = static_cast<double>(shape[0]) * receptive;
    const double factor = factor_ == XavierFactor::kIn    ? fan_in
                          : factor_ == XavierFactor::kOut ? fan_out
                                                          : (fan_in + fan_out) / 2;
    const double scale = std::sqrt(magnitude_ / std::max(factor, 1.0));
    if (rnd_ == XavierRandom::kUniform) return random_uniform(-scale, scale, shape, dtype, device);
    return random_normal(0.0, scale, shape, dtype, device);
  }

  std::string describe() const override {
    return fmt::format("Xavier({}, {}, {})",
                       rnd_ == XavierRandom::kUniform ? "uniform" : "gaussian",
                       factor_ == XavierFactor::kIn    ? "in"
                       : factor_ == XavierFactor::kOut ? "out"
                                                       : "avg",
                       magnitude_);
  }

 private:
  XavierRandom rnd_;
  XavierFactor factor_;
  double magnitude_;
};

}  // namespace

InitializerPtr Constant(double value) { return std::make_shared<ConstantInit>(value); }
InitializerPtr Zero() { return Constant(0.0); }
InitializerPtr One() { return Constant(1.0); }
InitializerPtr Uniform(double scale) {
  JANUS_CHECK(scale >= 0, ValueError, "Uniform: scale is {}, expected >= 0", scale);
  return std::make_shared<UniformInit>(scale);
}
InitializerPtr Normal(double sigma) {
  JANUS_CHECK(sigma >= 0, ValueError, "Normal: sigma is {}, expected >= 0", sigma);
  return std::make_shared<NormalInit>(sigma);
}
InitializerPtr Xavier(XavierRandom rnd, XavierFactor factor, double magnitude) {
  JANUS_CHECK(magnitude > 0, ValueError, "Xavier: magnitude is {}, expected > 0", magnitude);
  return std::make_shared<XavierInit>(rnd, factor, magnitude);
}

}  // namespace janus::nn
