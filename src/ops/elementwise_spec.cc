// Conformance specifications of the elementwise arithmetic operators.
#include "testing/op_spec.h"

namespace janus::testing {
namespace {

const std::vector<OpSample> kBinarySamples = {
    {{{2, 3}, {2, 3}}},    {{{2, 3}, {3}}},    {{{4, 1}, {1, 5}}}, {{{2, 1, 3}, {1, 4, 1}}},
    {{{}, {}}},            {{{3}, {}}},        {{{0, 3}, {3}}},    {{{1}, {2, 2}}},
};

ReferenceFn binary(std::function<double(double, double)> f) {
  return [f](const std::vector<RefTensor>& in, const ops::Attrs&) {
    return std::vector<RefTensor>{ref_broadcast(in[0], in[1], f)};
  };
}

ReferenceFn with_scalar(std::function<double(double, double)> f) {
  return [f](const std::vector<RefTensor>& in, const ops::Attrs& attrs) {
    const double s = attrs.get<double>(0);
    return std::vector<RefTensor>{ref_map(in[0], [&](double x) { return f(x, s); })};
  };
}

const std::vector<OpSample> kScalarSamples = {
    {{{2, 3}}, {0.5}}, {{{}}, {-3.0}}, {{{0}}, {1.0}}, {{{5, 1, 2}}, {2.0}}};

JANUS_OP_SPEC({.op = "add", .reference = binary(std::plus<>()), .samples = kBinarySamples});
JANUS_OP_SPEC({.op = "mul", .reference = binary(std::multiplies<>()), .samples = kBinarySamples});
JANUS_OP_SPEC({.op = "add_scalar", .reference = with_scalar(std::plus<>()), .samples = kScalarSamples});
JANUS_OP_SPEC({.op = "mul_scalar",
               .reference = with_scalar(std::multiplies<>()),
               .samples = kScalarSamples});

}  // namespace
}  // namespace janus::testing
