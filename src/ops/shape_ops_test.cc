// Tests of the shape operators beyond the conformance specs: split, index checks and the
// messages of their errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "janus/autograd/autograd.h"
#include "janus/base/error.h"
#include "janus/engine/array.h"
#include "janus/engine/engine.h"
#include "janus/ops/ops.h"
#include "janus/ops/optim.h"
#include "janus/ops/shape.h"

#include "testing/test_util.h"

namespace janus {
namespace {

using ::testing::Each;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

NDArray iota(Shape s, DType dtype = DType::kFloat32) {
  return reshape(arange(0, static_cast<double>(s.numel()), 1, dtype), s);
}
NDArray ints(std::vector<int64_t> v) {
  return from_vector<int64_t>(v, Shape{static_cast<int64_t>(v.size())});
}

// reshape, flatten, squeeze and expand_dims return views imperatively (OpDef::view_of): the
// input's storage, no engine operation; a later in-place write to the input is seen through
// the view, ordered by the shared var; gradients flow as through any operator.
TEST(OpShape, ReshapeLikeOperatorsReturnViewsOfTheirInput) {
  const NDArray x = iota({2, 3, 4});
  const int64_t pushed = engine().stats().pushed;
  const NDArray r = reshape(x, {4, -1});
  const NDArray f = flatten(x);
  const NDArray e = expand_dims(x, 1);
  const NDArray q = squeeze(e);
  EXPECT_EQ(engine().stats().pushed, pushed);  // no operations
  for (const NDArray* v : {&r, &f, &e, &q}) {
    EXPECT_EQ(v->raw_data(), x.raw_data());
    EXPECT_EQ(v->var(), x.var());
  }
  EXPECT_EQ(r.shape(), Shape({4, 6}));
  EXPECT_EQ(f.shape(), Shape({2, 12}));
  EXPECT_EQ(e.shape(), Shape({2, 1, 3, 4}));
  EXPECT_EQ(q.shape(), Shape({2, 3, 4}));
  sgd_update(x, ones({2, 3, 4}), 1.0);  // x -= 1, in place
  EXPECT_EQ(to_vector<float>(f)[5], 4.0f);

  const NDArray w = iota({2, 3});
  autograd::attach_grad(w);
  NDArray loss;
  {
    autograd::RecordScope record;
    loss = sum(mul(flatten(reshape(w, {3, 2})), flatten(reshape(w, {3, 2}))));
  }
  autograd::backward(loss);
  EXPECT_THAT(to_vector<float>(autograd::grad(w)), ElementsAre(0, 2, 4, 6, 8, 10));
}

TEST(OpShape, TransposeRejectsNonPermutations) {
  const NDArray x = zeros({2, 3, 4});
  EXPECT_THAT(error_of<ValueError>([&] {
                transpose(x, {0, 0, 1});
              }),
              HasSubstr("transpose: axes [0, 0, 1] is not a permutation of the 3 axes"));
  EXPECT_THAT(error_of<ValueError>([&] { transpose(x, {1, 0}); }), HasSubstr("axes [1, 0]"));
  EXPECT_THAT(error_of<ValueError>([&] {
                transpose(x, {0, 1, 3});
              }),
              HasSubstr("expected each of [0, 3) once"));
}

TEST(OpShape, TransposeReversesByDefault) {
  const NDArray y = transpose(iota({2, 3}));
  EXPECT_EQ(y.shape(), Shape({3, 2}));
  EXPECT_THAT(to_vector<float>(y), ElementsAre(0, 3, 1, 4, 2, 5));
}

TEST(OpShape, ConcatChecksShapesAndDtypes) {
  EXPECT_THAT(error_of<ShapeError>([&] {
                concat(zeros({2, 3}), zeros({2, 4}), 0);
              }),
              HasSubstr("concat: shapes [2, 3] and [2, 4] differ on axis 1"));
  EXPECT_THAT(error_of<ShapeError>([&] {
                concat(zeros({2, 3}), zeros({3}), 0);
              }),
              HasSubstr("same number (at least 1) of dimensions"));
  EXPECT_THAT(error_of<TypeError>([&] { concat(zeros({2}), zeros({2}, DType::kInt32)); }),
              HasSubstr("concat: inputs have dtypes float32 and int32"));
  EXPECT_THAT(error_of<IndexError>([&] { concat(zeros({2}), zeros({2}), 1); }),
              HasSubstr("concat: axis 1"));
}

TEST(OpShape, StackNeedsOneShape) {
  EXPECT_THAT(error_of<ShapeError>([&] { stack(zeros({2}), zeros({3})); }),
              HasSubstr("stack: inputs have shapes [2] and [3], expected one shape"));
  EXPECT_EQ(stack(zeros({2, 3}), zeros({2, 3}), 2).shape(), Shape({2, 3, 2}));
}

TEST(OpShape, SliceBoundsOutOfRangeAreIndexErrors) {
  const NDArray x = zeros({4, 5});
  EXPECT_THAT(
      error_of<IndexError>([&] { slice(x, {5}, {5}); }),
      HasSubstr("slice: begin 5 is out of range for axis 0 of extent 4, expected in [-4, 4]"));
  EXPECT_THAT(error_of<IndexError>([&] { slice_axis(x, 1, 0, 6); }),
              HasSubstr("slice_axis: end 6 is out of range for axis 1 of extent 5"));
  EXPECT_THAT(error_of<ValueError>([&] { slice(x, {0}, {1}, {0}); }),
              HasSubstr("slice: step 0 on axis 0"));
  EXPECT_THAT(error_of<ValueError>([&] {
                slice(x, {0, 0}, {1});
              }),
              HasSubstr("one entry per sliced axis"));
}

TEST(OpShape, SliceWithSteps) {
  const NDArray y = slice(iota({4, 5}), {0, 1}, {4, 5}, {2, 3});
  EXPECT_EQ(y.shape(), Shape({2, 2}));
  EXPECT_THAT(to_vector<float>(y), ElementsAre(1, 4, 11, 14));
}

TEST(OpShape, SplitIntoEqualParts) {
  const std::vector<NDArray> parts = split(iota({2, 6}), 3, 1);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_THAT(to_vector<float>(parts[1]), ElementsAre(2, 3, 8, 9));
  EXPECT_THAT(
      error_of<ValueError>([&] {
        split(iota({2, 6}), 4, 1);
      }),
      HasSubstr("split: axis 1 of shape [2, 6] has extent 6, which 4 sections cannot divide"));
}

TEST(OpShape, TakeIndexOutOfRangeIsIndexErrorWhenRead) {
  const NDArray x = iota({3, 2});
  const NDArray y = take(x, ints({0, 7}), 0);
  EXPECT_THAT(error_of<IndexError>([&] { wait_to_read(y); }),
              HasSubstr("take: index 7 at position 1 is out of range for an axis of extent 3, "
                        "expected in [-3, 3)"));
  EXPECT_THAT(error_of<TypeError>([&] { take(x, zeros({2})); }),
              HasSubstr("take: indices has dtype float32, expected int32 or int64"));
}

TEST(OpShape, TakeAndScatterAdd) {
  const NDArray x = iota({3, 2});
  EXPECT_THAT(to_vector<float>(take(x, ints({2, -3, 2}), 0)), ElementsAre(4, 5, 0, 1, 4, 5));
  const NDArray s = scatter_add(zeros({3}), ints({1, 1, 0}), full({3}, 2.0));
  EXPECT_THAT(to_vector<float>(s), ElementsAre(2, 4, 0));
  EXPECT_THAT(error_of<ShapeError>([&] {
                scatter_add(zeros({3, 2}), ints({1}), zeros({2, 2}));
              }),
              HasSubstr("scatter_add: updates have shape [2, 2], expected [1, 2]"));
}

// gather_nd picks x's rows at tuples down the first axis of the positions (negative from the
// end) and sums repeated rows in its gradient; the errors name the tuple, the axis and the
// shapes.
TEST(OpShape, GatherNdTuplesAndErrors) {
  const NDArray x = iota({2, 3, 2});
  const NDArray pairs = from_vector<int64_t>({1, -1, 1, 2, 0, 2}, Shape{2, 3});
  EXPECT_THAT(to_vector<float>(gather_nd(x, pairs)), ElementsAre(10, 11, 6, 7, 10, 11));
  NDArray w = iota({2, 3, 2});
  autograd::attach_grad(w);
  {
    autograd::RecordScope record;
    autograd::backward(sum(gather_nd(w, pairs) * iota({3, 2})));
  }
  EXPECT_THAT(to_vector<float>(autograd::grad(w)), ElementsAre(0, 0, 0, 0, 0, 0, 2, 3, 0, 0, 4, 6));
  EXPECT_THAT(error_of<IndexError>([&] {
                wait_to_read(gather_nd(x, from_vector<int64_t>({0, 1, 3, 0}, Shape{2, 2})));
              }),
              HasSubstr("gather_nd: position 3 of tuple 0 is out of range for axis 1 of extent 3, "
                        "expected in [-3, 3)"));
  EXPECT_THAT(error_of<ShapeError>([&] {
                gather_nd(x, zeros({4, 1}, DType::kInt32));
              }),
              HasSubstr("gather_nd: indices of shape [4, 1] hold 4 positions per tuple (their "
                        "first extent), expected 1 to 3 for x of shape [2, 3, 2]"));
  EXPECT_THAT(error_of<TypeError>([&] {
                gather_nd(x, zeros({1, 2}));
              }),
              HasSubstr("gather_nd: indices has dtype float32, expected int32 or int64"));
}

// slice_like keeps the leading box with like's extents; its gradient is zero outside it.
TEST(OpShape, SliceLikeBoxesAndErrors) {
  const NDArray x = iota({2, 3});
  EXPECT_THAT(to_vector<float>(slice_like(x, zeros({1, 2}))), ElementsAre(0, 1));
  EXPECT_THAT(to_vector<float>(slice_like(x, zeros({5, 2}), {-1})), ElementsAre(0, 1, 3, 4));
  NDArray w = iota({2, 3});
  autograd::attach_grad(w);
  {
    autograd::RecordScope record;
    autograd::backward(sum(slice_like(w, zeros({2, 2}))));
  }
  EXPECT_THAT(to_vector<float>(autograd::grad(w)), ElementsAre(1, 1, 0, 1, 1, 0));
  EXPECT_THAT(error_of<ShapeError>([&] { slice_like(x, zeros({2})); }),
              HasSubstr("slice_like: x has shape [2, 3] and like [2]: with no axes every axis is "
                        "sliced, which needs as many dimensions in both"));
  EXPECT_THAT(error_of<ShapeError>([&] {
                slice_like(x, zeros({1, 4}));
              }),
              HasSubstr("slice_like: like (shape [1, 4]) has extent 4 on axis 1, more than x's 3"));
  EXPECT_THAT(error_of<ShapeError>([&] { slice_like(x, zeros({1}), {1}); }),
              HasSubstr("slice_like: axis 1 is past the last axis of like (shape [1])"));
  EXPECT_THAT(error_of<IndexError>([&] { slice_like(x, zeros({1}), {-3}); }),
              HasSubstr("slice_like: axis -3 is out of range for an array of 2 dimensions"));
}

// reshape_like replaces x's axes [begin, end) by like's (MXNet's lhs_ and rhs_ ranges): the
// elements keep their order, the gradient comes back in x's shape, and every bad range or count
// is named.
TEST(OpShape, ReshapeLikeRangesAndErrors) {
  const NDArray x = iota({2, 6, 2});
  const NDArray like = zeros({3, 2, 5});
  EXPECT_EQ(reshape_like(x, like, {1, 2}, {0, 2}).shape(), Shape({2, 3, 2, 2}));
  EXPECT_EQ(reshape_like(x, like, {-2, -1}, {0, -1}).shape(), Shape({2, 3, 2, 2}));
  EXPECT_EQ(reshape_like(x, zeros({4, 3}), {0, 2}).shape(), Shape({4, 3, 2}));
  EXPECT_EQ(reshape_like(x, like, {1, 1}, {2, 2}).shape(), x.shape());  // empty ranges
  EXPECT_EQ(to_vector<float>(reshape_like(x, like, {1, 2}, {0, 2})), to_vector<float>(x));
  NDArray w = iota({2, 6, 2});
  autograd::attach_grad(w);
  {
    autograd::RecordScope record;
    autograd::backward(sum(reshape_like(w, like, {1, 2}, {0, 2}) * 2.0));
  }
  EXPECT_EQ(autograd::grad(w).shape(), w.shape());
  EXPECT_THAT(to_vector<float>(autograd::grad(w)), Each(2.0f));
  EXPECT_THAT(error_of<ValueError>([&] {
                reshape_like(x, like, {0, 1, 2});
              }),
              HasSubstr("reshape_like: x_axes has 3 values, expected none (every axis of x), "
                        "[begin] or [begin, end]"));
  EXPECT_THAT(error_of<ValueError>([&] {
                reshape_like(x, like, {}, {1, 4});
              }),
              HasSubstr("reshape_like: like_axes [1, 4] reaches past the 3 axes of like (shape "
                        "[3, 2, 5]), expected bounds in [-3, 3]"));
  EXPECT_THAT(error_of<ValueError>([&] { reshape_like(x, like, {-4}); }),
              HasSubstr("reshape_like: x_axes [-4] reaches past the 3 axes of x"));
  EXPECT_THAT(error_of<ValueError>([&] {
                reshape_like(x, like, {2, 1});
              }),
              HasSubstr("reshape_like: x_axes [2, 1] begins at axis 2 after its end 1 (of x, "
                        "shape [2, 6, 2])"));
  EXPECT_THAT(error_of<ShapeError>([&] {
                reshape_like(x, like, {1, 2}, {1});
              }),
              HasSubstr("reshape_like: x of shape [2, 6, 2] has 24 elements and the shape [2, 2, "
                        "5, 2] taken from like (shape [3, 2, 5]) has 40, expected as many"));
}

TEST(OpShape, SqueezeExpandFlattenBroadcastPadErrors) {
  EXPECT_THAT(error_of<ShapeError>([&] {
                squeeze(zeros({1, 3}), {1});
              }),
              HasSubstr("squeeze: axis 1 of shape [1, 3] has extent 3, expected 1"));
  EXPECT_THAT(error_of<IndexError>([&] { expand_dims(zeros({2}), 2); }),
              HasSubstr("expand_dims: axis 2"));
  EXPECT_THAT(error_of<ShapeError>([&] { flatten(zeros({})); }),
              HasSubstr("flatten: input has shape []"));
  EXPECT_THAT(error_of<ShapeError>([&] {
                broadcast_to(zeros({2, 3}), {3, 3});
              }),
              HasSubstr("broadcast_to: cannot broadcast shape [2, 3] to [3, 3]"));
  EXPECT_THAT(error_of<ValueError>([&] {
                pad(zeros({2}), {1, -1});
              }),
              HasSubstr("pad: widths [1, -1] has the negative entry -1"));
  EXPECT_THAT(error_of<ValueError>([&] { pad(zeros({2}), {1}); }),
              HasSubstr("expected 2 (before, after per axis)"));
  EXPECT_EQ(flatten(zeros({2, 3, 4})).shape(), Shape({2, 12}));
  EXPECT_EQ(squeeze(zeros({1, 3, 1})).shape(), Shape({3}));
  EXPECT_THAT(to_vector<float>(pad(iota({2}), {1, 2}, 9)), ElementsAre(9, 0, 1, 9, 9));
}

}  // namespace
}  // namespace janus
