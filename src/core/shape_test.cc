// Tests of shape.h: element counts, printing and reshape resolution with its errors.
#include "janus/core/shape.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "janus/base/error.h"

#include "testing/test_util.h"

namespace janus {
namespace {

using ::testing::HasSubstr;

TEST(Shape, NumelAndNdim) {
  EXPECT_EQ(Shape{}.numel(), 1);  // a scalar has one element
  EXPECT_EQ(Shape{}.ndim(), 0);
  EXPECT_EQ((Shape{7}).numel(), 7);
  EXPECT_EQ((Shape{2, 3, 4}).numel(), 24);
  EXPECT_EQ((Shape{2, 3, 4}).ndim(), 3);
  EXPECT_EQ((Shape{0}).numel(), 0);
  EXPECT_EQ((Shape{5, 0, 3}).numel(), 0);
  EXPECT_EQ((Shape{1, 1, 1}).numel(), 1);
  EXPECT_EQ((Shape{1 << 20, 1 << 20}).numel(), int64_t{1} << 40);  // no 32-bit overflow
}

TEST(Shape, NumelThatOverflowsIsAShapeError) {
  // 2^62 * 4 wrapped to 0 elements before the check.
  EXPECT_THAT(error_of<ShapeError>([] {
                (Shape{int64_t{1} << 62, 4}).numel();
              }),
              HasSubstr("shape [4611686018427387904, 4]: the element count overflows int64, "
                        "expected at most 9223372036854775807 elements"));
  EXPECT_THAT(error_of<ShapeError>([] {
                (Shape{int64_t{1} << 32, int64_t{1} << 32}).numel();
              }),
              HasSubstr("overflows int64"));
  EXPECT_EQ((Shape{int64_t{1} << 62, 4, 0}).numel(), 0);  // empty, whatever the other extents
  EXPECT_EQ((Shape{int64_t{1} << 62, 1}).numel(), int64_t{1} << 62);
}

TEST(Shape, ToStringAndFormat) {
  EXPECT_EQ(Shape{}.to_string(), "[]");
  EXPECT_EQ((Shape{7}).to_string(), "[7]");
  EXPECT_EQ((Shape{2, 3}).to_string(), "[2, 3]");
  EXPECT_EQ((Shape{0, 1, 2}).to_string(), "[0, 1, 2]");
  EXPECT_EQ(fmt::format("{}", Shape{4, 5}), "[4, 5]");
  EXPECT_EQ(fmt::format("<{}>", Shape{}), "<[]>");
}

TEST(Shape, AccessEqualityAndConstruction) {
  Shape s{2, 3, 4};
  EXPECT_EQ(s[0], 2);
  EXPECT_EQ(s[2], 4);
  s[1] = 9;
  EXPECT_EQ(s, (Shape{2, 9, 4}));
  EXPECT_NE(s, (Shape{2, 9}));
  EXPECT_NE(Shape{}, (Shape{1}));
  EXPECT_EQ(Shape(std::vector<int64_t>{5, 6}), (Shape{5, 6}));
  EXPECT_EQ(s.dims(), (std::vector<int64_t>{2, 9, 4}));
  int64_t product = 1;
  for (int64_t d : s) product *= d;
  EXPECT_EQ(product, s.numel());
}

TEST(Shape, ResolveReshapeWithoutMinusOne) {
  EXPECT_EQ(resolve_reshape({2, 3}, {3, 2}), (Shape{3, 2}));
  EXPECT_EQ(resolve_reshape({2, 3}, {6}), (Shape{6}));
  EXPECT_EQ(resolve_reshape({2, 3}, {1, 6, 1}), (Shape{1, 6, 1}));
  EXPECT_EQ(resolve_reshape({}, {1, 1}), (Shape{1, 1}));
  EXPECT_EQ(resolve_reshape({1}, {}), Shape{});
  EXPECT_EQ(resolve_reshape({0, 4}, {2, 0}), (Shape{2, 0}));
}

TEST(Shape, ResolveReshapeInfersMinusOne) {
  EXPECT_EQ(resolve_reshape({2, 3, 4}, {-1, 4}), (Shape{6, 4}));
  EXPECT_EQ(resolve_reshape({2, 3, 4}, {2, -1}), (Shape{2, 12}));
  EXPECT_EQ(resolve_reshape({6}, {2, -1, 3}), (Shape{2, 1, 3}));
  EXPECT_EQ(resolve_reshape({24}, {-1}), (Shape{24}));
  EXPECT_EQ(resolve_reshape({}, {-1}), (Shape{1}));
  EXPECT_EQ(resolve_reshape({0, 3}, {-1, 3}), (Shape{0, 3}));
  EXPECT_EQ(resolve_reshape({0, 3}, {-1}), (Shape{0}));
}

// Runs resolve_reshape(from, to), which must throw ShapeError, and returns the message.
std::string reshape_error(const Shape& from, const Shape& to) {
  try {
    resolve_reshape(from, to);
  } catch (const ShapeError& e) {
    return e.what();
  }
  ADD_FAILURE() << "resolve_reshape(" << from.to_string() << ", " << to.to_string()
                << ") did not throw ShapeError";
  return "";
}

TEST(Shape, ResolveReshapeRejectsTwoMinusOnes) {
  const std::string msg = reshape_error({2, 3}, {-1, -1});
  EXPECT_THAT(msg, HasSubstr("reshape: target shape [-1, -1] has more than one -1"));
  EXPECT_THAT(msg, HasSubstr("expected at most one"));
}

TEST(Shape, ResolveReshapeRejectsNegativeExtents) {
  std::string msg = reshape_error({2, 3}, {-2, 3});
  EXPECT_THAT(msg, HasSubstr("reshape: target shape [-2, 3] has a negative extent at axis 0"));
  EXPECT_THAT(msg, HasSubstr("expected >= 0 or -1"));
  msg = reshape_error({2, 3}, {6, 1, -5});
  EXPECT_THAT(msg, HasSubstr("target shape [6, 1, -5] has a negative extent at axis 2"));
}

TEST(Shape, ResolveReshapeRejectsMismatchedCounts) {
  std::string msg = reshape_error({2, 3}, {7});
  EXPECT_THAT(msg, HasSubstr("reshape: cannot reshape [2, 3] (6 elements) into [7] (7 elements)"));
  msg = reshape_error({5}, {});
  EXPECT_THAT(msg, HasSubstr("cannot reshape [5] (5 elements) into [] (1 elements)"));
  msg = reshape_error({0}, {1});
  EXPECT_THAT(msg, HasSubstr("cannot reshape [0] (0 elements) into [1] (1 elements)"));
}

TEST(Shape, ResolveReshapeRejectsUninferableMinusOne) {
  std::string msg = reshape_error({2, 3}, {4, -1});
  EXPECT_THAT(msg, HasSubstr("reshape: cannot reshape [2, 3] (6 elements) into [4, -1]"));
  EXPECT_THAT(msg, HasSubstr("the -1 axis cannot be inferred"));
  // A zero extent next to -1 leaves the -1 undetermined.
  msg = reshape_error({0, 3}, {0, -1});
  EXPECT_THAT(msg, HasSubstr("cannot reshape [0, 3] (0 elements) into [0, -1]"));
  msg = reshape_error({2, 3}, {0, -1});
  EXPECT_THAT(msg, HasSubstr("into [0, -1]"));
}

}  // namespace
}  // namespace janus
