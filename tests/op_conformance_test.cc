// The operator conformance suite: for every registered operator, its specification's samples
// are run in float64 and float32 against the float64 reference, and its gradient against
// central differences in float64. One test per operator, registered at start-up from the specs
// in src/ops/*_spec.cc; an operator without a specification fails.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "janus/autograd/autograd.h"
#include "janus/engine/array.h"
#include "janus/ops/ops.h"
#include "janus/ops/registry.h"

#include "testing/op_spec.h"

namespace janus::testing {
namespace {

constexpr int kMaxGradElements = 48;  // numeric gradients of larger inputs check a sample
constexpr double kEps = 1e-6;

ops::Attrs complete(const ops::OpDef& op, ops::Attrs attrs) {
  auto& v = attrs.values();
  for (size_t i = v.size(); i < op.attrs.size(); ++i) {
    if (op.attrs[i].default_value) v.push_back(*op.attrs[i].default_value);
  }
  return attrs;
}

uint32_t seed_of(const std::string& op, size_t sample) {
  uint32_t h = 2166136261u;
  for (char c : op) h = (h ^ static_cast<uint8_t>(c)) * 16777619u;
  return h ^ static_cast<uint32_t>(sample * 7919);
}

bool is_int_input(const OpSample& s, size_t i) {
  return i < s.int_dtypes.size() && s.int_dtypes[i] != DType::kFloat64;
}

bool differentiated(const OpSpec& spec, const OpSample& s, size_t i) {
  return !is_int_input(s, i) && std::find(spec.no_grad_inputs.begin(), spec.no_grad_inputs.end(),
                                          i) == spec.no_grad_inputs.end();
}

std::vector<RefTensor> make_inputs(const OpSpec& spec, const OpSample& s, std::mt19937& rng) {
  std::uniform_real_distribution<double> dist(spec.low, spec.high);
  std::vector<RefTensor> in;
  for (size_t i = 0; i < s.shapes.size(); ++i) {
    RefTensor t = ref_zeros(s.shapes[i]);
    for (double& v : t.data) v = dist(rng);
    if (spec.make_input) spec.make_input(static_cast<int>(i), t, rng);
    in.push_back(std::move(t));
  }
  return in;
}

std::vector<NDArray> to_arrays(const std::vector<RefTensor>& in, const OpSample& s, DType fdtype) {
  std::vector<NDArray> out;
  for (size_t i = 0; i < in.size(); ++i) {
    const DType dt = is_int_input(s, i) ? s.int_dtypes[i] : fdtype;
    out.push_back(from_vector<double>(in[i].data, in[i].shape, dt));
  }
  return out;
}

void expect_close(const NDArray& got, const RefTensor& want, double rtol, double atol,
                  const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape) << what << ": shape";
  const std::vector<double> g = to_vector<double>(got);
  int reported = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    const double w = want.data[i];
    const bool both_nan = std::isnan(g[i]) && std::isnan(w);
    const bool ok = both_nan || g[i] == w || std::fabs(g[i] - w) <= atol + rtol * std::fabs(w);
    if (!ok && reported++ < 5) {
      ADD_FAILURE() << what << ": element " << i << " is " << g[i] << ", expected " << w;
    }
  }
}

// sum_j <w_j, y_j> evaluated on the host, for the numeric gradient.
double weighted_loss(const std::vector<NDArray>& outs, const std::vector<std::vector<double>>& w) {
  double total = 0;
  for (size_t j = 0; j < outs.size(); ++j) {
    if (!is_floating(outs[j].dtype())) continue;
    const std::vector<double> y = to_vector<double>(outs[j]);
    for (size_t i = 0; i < y.size(); ++i) total += y[i] * w[j][i];
  }
  return total;
}

void check_sample(const OpSpec& spec, const ops::OpDef& op, const OpSample& s, size_t k) {
  std::mt19937 rng(seed_of(spec.op, k));
  const std::vector<RefTensor> in = make_inputs(spec, s, rng);
  const ops::Attrs attrs = complete(op, s.attrs);
  const std::string where =
      fmt::format("{} sample {} (shapes {})", spec.op, k, fmt::join(s.shapes, ", "));
  const std::vector<RefTensor> want = spec.reference(in, attrs);

  auto run = [&](DType fdtype) { return ops::invoke(op, to_arrays(in, s, fdtype), s.attrs); };
  const std::vector<NDArray> out64 = run(DType::kFloat64);
  ASSERT_EQ(out64.size(), want.size()) << where;
  for (size_t j = 0; j < want.size(); ++j) {
    expect_close(out64[j], want[j], spec.rtol64, spec.atol64,
                 where + " float64 output " + std::to_string(j));
  }
  if (spec.check_float32) {
    const std::vector<NDArray> out32 = run(DType::kFloat32);
    for (size_t j = 0; j < want.size(); ++j) {
      expect_close(out32[j], want[j], spec.rtol32, spec.atol32,
                   where + " float32 output " + std::to_string(j));
    }
  }
  if (!spec.check_grad || op.not_differentiable) return;

  // Gradient of sum_j <w_j, y_j> with random weights.
  std::uniform_real_distribution<double> wdist(-1, 1);
  std::vector<std::vector<double>> w;
  for (const RefTensor& y : want) {
    std::vector<double> wj(y.data.size());
    for (double& v : wj) v = wdist(rng);
    w.push_back(std::move(wj));
  }
  std::vector<NDArray> xs = to_arrays(in, s, DType::kFloat64);
  for (size_t i = 0; i < xs.size(); ++i) {
    if (differentiated(spec, s, i)) autograd::attach_grad(xs[i]);
  }
  std::vector<NDArray> heads, head_grads;
  {
    autograd::RecordScope record;
    std::vector<NDArray> ys = ops::invoke(op, xs, s.attrs);
    for (size_t j = 0; j < ys.size(); ++j) {
      if (!is_floating(ys[j].dtype()) || !autograd::requires_grad(ys[j])) continue;
      heads.push_back(ys[j]);
      head_grads.push_back(from_vector<double>(w[j], ys[j].shape()));
    }
  }
  if (heads.empty()) return;
  autograd::backward(heads, head_grads);
  for (size_t i = 0; i < xs.size(); ++i) {
    if (!differentiated(spec, s, i)) continue;
    const std::vector<double> analytic = to_vector<double>(autograd::grad(xs[i]));
    std::vector<int64_t> elems(static_cast<size_t>(in[i].size()));
    for (size_t e = 0; e < elems.size(); ++e) elems[e] = static_cast<int64_t>(e);
    if (elems.size() > kMaxGradElements) {
      std::shuffle(elems.begin(), elems.end(), rng);
      elems.resize(kMaxGradElements);
    }
    int reported = 0;
    for (int64_t e : elems) {
      auto eval = [&](double delta) {
        std::vector<RefTensor> moved = in;
        moved[i][e] += delta;
        return weighted_loss(ops::invoke(op, to_arrays(moved, s, DType::kFloat64), s.attrs), w);
      };
      const double numeric = (eval(kEps) - eval(-kEps)) / (2 * kEps);
      const double got = analytic[static_cast<size_t>(e)];
      if (std::fabs(got - numeric) > spec.grad_atol + spec.grad_rtol * std::fabs(numeric) &&
          reported++ < 5) {
        ADD_FAILURE() << where << ": gradient of input " << i << " element " << e << " is " << got
                      << ", finite differences give " << numeric;
      }
    }
  }
}

class ConformanceTest : public ::testing::Test {
 public:
  explicit ConformanceTest(const OpSpec* spec) : spec_(spec) {}
  void TestBody() override {
    const ops::OpDef& op = ops::get_op(spec_->op);
    if (!spec_->reference) {
      ASSERT_FALSE(spec_->note.empty()) << spec_->op << ": a spec without a reference must say why";
      GTEST_SKIP() << spec_->note;
    }
    ASSERT_FALSE(spec_->samples.empty()) << spec_->op << ": no samples";
    for (size_t k = 0; k < spec_->samples.size(); ++k)
      check_sample(*spec_, op, spec_->samples[k], k);
  }

 private:
  const OpSpec* spec_;
};

TEST(Conformance, EveryOperatorHasASpecification) {
  std::set<std::string> with_spec;
  for (const OpSpec& s : op_specs()) {
    EXPECT_NE(ops::find_op(s.op), nullptr) << "spec for unknown operator '" << s.op << "'";
    EXPECT_TRUE(with_spec.insert(s.op).second) << "two specs for '" << s.op << "'";
  }
  for (const ops::OpDef* op : ops::all_ops()) {
    EXPECT_TRUE(with_spec.contains(std::string(op->name)))
        << "operator '" << op->name << "' has no conformance spec (add one in src/ops/*_spec.cc)";
  }
}

}  // namespace
}  // namespace janus::testing

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  for (const auto& spec : janus::testing::op_specs()) {
    const auto* s = &spec;
    ::testing::RegisterTest(
        "Conformance", spec.op.c_str(), nullptr, nullptr, __FILE__, __LINE__,
        [s]() -> ::testing::Test* { return new janus::testing::ConformanceTest(s); });
  }
  return RUN_ALL_TESTS();
}
