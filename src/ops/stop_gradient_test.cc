// Tests of stop_gradient: the value passes unchanged, the gradient does not.
#include <gtest/gtest.h>

#include <vector>

#include "janus/autograd/autograd.h"
#include "janus/engine/array.h"
#include "janus/ops/ops.h"
#include "janus/ops/registry.h"

#include "testing/test_util.h"

namespace janus {
namespace {

NDArray stop_gradient(const NDArray& x) {
  return ops::invoke(ops::get_op("stop_gradient"), {x}, {})[0];
}

TEST(OpStopGradient, ValueUnchangedForEveryDType) {
  EXPECT_EQ(to_vector<double>(stop_gradient(from_vector<double>({1.5, -2}, {2}))),
            (std::vector<double>{1.5, -2}));
  EXPECT_EQ(to_vector<int64_t>(stop_gradient(from_vector<int64_t>({7, -3, 0}, {3}))),
            (std::vector<int64_t>{7, -3, 0}));
}

TEST(OpStopGradient, NoGradientFlowsThroughIt) {
  NDArray x = from_vector<double>({1, 2, 3}, {3});
  autograd::attach_grad(x);
  {
    autograd::RecordScope record;
    // d/dx (x * stop(x)) is stop(x) = x, not 2x; d/dx (x - stop(x)) is 1, and its value is 0.
    NDArray y = x * stop_gradient(x) + (x - stop_gradient(x)) * 10.0;
    EXPECT_EQ(to_vector<double>(y), (std::vector<double>{1, 4, 9}));
    autograd::backward(y);
  }
  EXPECT_EQ(to_vector<double>(autograd::grad(x)), (std::vector<double>{11, 12, 13}));
}

}  // namespace
}  // namespace janus
