// Tests of ndarray.h: accessors, views (reshape, slice, at) that share storage and var, their
// errors, and the release of storage back to the pool once the last handle is gone.
#include "janus/core/ndarray.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <numeric>
#include <sstream>
#include <vector>

#include "janus/base/error.h"
#include "janus/engine/array.h"

#include "testing/test_util.h"

namespace janus {
namespace {

using ::testing::HasSubstr;

// An array over a pool block, without the engine (var is null): for the pure view tests.
NDArray host_array(const Shape& shape, DType dtype) {
  Allocator& alloc = allocator_for(cpu(0));
  const Block block = alloc.allocate(static_cast<size_t>(shape.numel()) * dtype_size(dtype));
  auto storage = std::shared_ptr<Storage>(new Storage{block, cpu(0), nullptr}, [](Storage* s) {
    allocator_for(s->device).free(s->block);
    delete s;
  });
  return NDArray(std::move(storage), shape, dtype);
}

std::vector<float> iota(int64_t n, float start = 0.0f) {
  std::vector<float> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), start);
  return v;
}

// ---- accessors ------------------------------------------------------------------------------

TEST(NDArray, DefaultConstructedIsUndefined) {
  NDArray a;
  EXPECT_FALSE(a.defined());
  EXPECT_THAT(error_of<ValueError>([&] { a.reshape({1}); }),
              HasSubstr("reshape: the array is undefined"));
  EXPECT_THAT(error_of<ValueError>([&] { a.slice(0, 1); }),
              HasSubstr("slice: the array is undefined"));
  EXPECT_THAT(error_of<ValueError>([&] { a.at(0); }), HasSubstr("at: the array is undefined"));
}

TEST(NDArray, Accessors) {
  NDArray a = host_array({2, 3, 4}, DType::kFloat64);
  ASSERT_TRUE(a.defined());
  EXPECT_EQ(a.shape(), (Shape{2, 3, 4}));
  EXPECT_EQ(a.ndim(), 3);
  EXPECT_EQ(a.size(), 24);
  EXPECT_EQ(a.nbytes(), 24u * 8u);
  EXPECT_EQ(a.dtype(), DType::kFloat64);
  EXPECT_EQ(a.device(), cpu(0));
  EXPECT_EQ(a.offset_bytes(), 0u);
  EXPECT_EQ(a.raw_data(), a.storage()->block.ptr);
  EXPECT_EQ(static_cast<void*>(a.data<double>()), a.raw_data());
  EXPECT_EQ(a.var(), nullptr);
  EXPECT_EQ(a.storage().use_count(), 1);
}

TEST(NDArray, CopiesAreTheSameArray) {
  NDArray a = host_array({4}, DType::kInt32);
  NDArray b = a;  // NOLINT(performance-unnecessary-copy-initialization)
  EXPECT_TRUE(a.is_same(b));
  EXPECT_EQ(a.storage(), b.storage());
  NDArray c = host_array({4}, DType::kInt32);
  EXPECT_FALSE(a.is_same(c));
}

TEST(NDArray, ScalarAndEmptyShapes) {
  NDArray s = host_array({}, DType::kFloat32);
  EXPECT_EQ(s.ndim(), 0);
  EXPECT_EQ(s.size(), 1);
  EXPECT_EQ(s.nbytes(), 4u);
  NDArray e = host_array({3, 0}, DType::kFloat32);
  EXPECT_EQ(e.size(), 0);
  EXPECT_EQ(e.nbytes(), 0u);
  EXPECT_NE(e.raw_data(), nullptr);
}

// ---- views ----------------------------------------------------------------------------------

TEST(NDArray, ReshapeSharesStorageAndVar) {
  NDArray a = empty({2, 3, 4}, DType::kFloat32);
  ASSERT_NE(a.var(), nullptr);
  NDArray r = a.reshape({-1, 4});
  EXPECT_EQ(r.shape(), (Shape{6, 4}));
  EXPECT_EQ(r.storage(), a.storage());
  EXPECT_EQ(r.var(), a.var());
  EXPECT_EQ(r.raw_data(), a.raw_data());
  EXPECT_EQ(r.dtype(), a.dtype());
  EXPECT_FALSE(r.is_same(a));              // a new array object over the same storage
  EXPECT_EQ(a.shape(), (Shape{2, 3, 4}));  // the source is unchanged
  EXPECT_EQ(a.reshape({24}).shape(), (Shape{24}));
  EXPECT_EQ(a.reshape({2, -1}).shape(), (Shape{2, 12}));
}

TEST(NDArray, ReshapeOfAViewKeepsItsOffset) {
  NDArray a = empty({4, 6}, DType::kInt64);
  NDArray v = a.slice(1, 3).reshape({3, 4});
  EXPECT_EQ(v.offset_bytes(), 6u * 8u);
  EXPECT_EQ(v.var(), a.var());
}

TEST(NDArray, ReshapeErrorsNameBothShapes) {
  NDArray a = empty({2, 3}, DType::kFloat32);
  EXPECT_THAT(error_of<ShapeError>([&] {
                a.reshape({4, 2});
              }),
              HasSubstr("cannot reshape [2, 3] (6 elements) into [4, 2] (8 elements)"));
  EXPECT_THAT(error_of<ShapeError>([&] {
                a.reshape({-1, 4});
              }),
              HasSubstr("cannot reshape [2, 3] (6 elements) into [-1, 4]"));
  EXPECT_THAT(error_of<ShapeError>([&] {
                a.reshape({-1, -1});
              }),
              HasSubstr("target shape [-1, -1] has more than one -1"));
}

TEST(NDArray, SliceOffsetsAndShapes) {
  NDArray a = empty({5, 3}, DType::kFloat32);
  NDArray s = a.slice(1, 4);
  EXPECT_EQ(s.shape(), (Shape{3, 3}));
  EXPECT_EQ(s.offset_bytes(), 12u);
  EXPECT_EQ(s.raw_data(), static_cast<char*>(a.raw_data()) + 12);
  EXPECT_EQ(s.var(), a.var());
  EXPECT_EQ(s.storage(), a.storage());
  // Slices of slices add up.
  NDArray ss = s.slice(2, 3);
  EXPECT_EQ(ss.shape(), (Shape{1, 3}));
  EXPECT_EQ(ss.offset_bytes(), 36u);
  EXPECT_EQ(ss.var(), a.var());
  // Empty and full ranges.
  EXPECT_EQ(a.slice(2, 2).shape(), (Shape{0, 3}));
  EXPECT_EQ(a.slice(5, 5).offset_bytes(), 60u);
  EXPECT_EQ(a.slice(0, 5).shape(), a.shape());
  // Higher rank: a row is the product of the other extents.
  NDArray b = empty({4, 2, 5}, DType::kFloat16);
  EXPECT_EQ(b.slice(3, 4).offset_bytes(), 3u * 10u * 2u);
}

TEST(NDArray, SliceErrorsCarryTheValues) {
  NDArray a = empty({4, 3}, DType::kFloat32);
  std::string msg = error_of<IndexError>([&] { a.slice(2, 1); });
  EXPECT_THAT(msg, HasSubstr("slice: range [2, 1) is outside axis 0 of shape [4, 3]"));
  EXPECT_THAT(msg, HasSubstr("expected 0 <= begin <= end <= 4"));
  EXPECT_THAT(error_of<IndexError>([&] { a.slice(-1, 2); }), HasSubstr("range [-1, 2)"));
  EXPECT_THAT(error_of<IndexError>([&] { a.slice(0, 5); }), HasSubstr("range [0, 5)"));
  EXPECT_THAT(error_of<IndexError>([&] { a.slice(5, 5); }), HasSubstr("range [5, 5)"));
  NDArray s = empty({}, DType::kFloat32);
  EXPECT_THAT(error_of<IndexError>([&] { s.slice(0, 1); }),
              HasSubstr("slice: cannot slice a scalar (shape [])"));
}

TEST(NDArray, AtRemovesTheFirstAxis) {
  NDArray a = empty({4, 3}, DType::kInt32);
  NDArray r = a.at(2);
  EXPECT_EQ(r.shape(), (Shape{3}));
  EXPECT_EQ(r.offset_bytes(), 2u * 3u * 4u);
  EXPECT_EQ(r.var(), a.var());
  EXPECT_EQ(r.storage(), a.storage());
  EXPECT_EQ(a.at(-1).offset_bytes(), 3u * 3u * 4u);
  EXPECT_EQ(a.at(-4).offset_bytes(), 0u);
  NDArray x = a.at(1).at(2);  // a scalar view
  EXPECT_EQ(x.shape(), Shape{});
  EXPECT_EQ(x.size(), 1);
  EXPECT_EQ(x.offset_bytes(), (3u + 2u) * 4u);
  EXPECT_EQ(x.var(), a.var());
}

TEST(NDArray, AtErrorsCarryTheValues) {
  NDArray a = empty({4, 3}, DType::kFloat32);
  std::string msg = error_of<IndexError>([&] { a.at(4); });
  EXPECT_THAT(msg, HasSubstr("at: index 4 is out of range for axis 0 of shape [4, 3]"));
  EXPECT_THAT(msg, HasSubstr("expected in [-4, 4)"));
  EXPECT_THAT(error_of<IndexError>([&] { a.at(-5); }), HasSubstr("index -5 is out of range"));
  NDArray e = empty({0, 2}, DType::kFloat32);
  EXPECT_THAT(error_of<IndexError>([&] { e.at(0); }),
              HasSubstr("index 0 is out of range for axis 0 of shape [0, 2], expected in [0, 0)"));
  NDArray s = empty({}, DType::kFloat32);
  EXPECT_THAT(error_of<IndexError>([&] { s.at(0); }),
              HasSubstr("at: cannot index a scalar (shape [])"));
}

TEST(NDArray, ViewsReadTheRightElements) {
  NDArray a = from_vector(iota(12), {4, 3});
  EXPECT_EQ(to_vector<float>(a.slice(1, 3)), (std::vector<float>{3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(to_vector<float>(a.at(-1)), (std::vector<float>{9, 10, 11}));
  EXPECT_EQ(to_vector<float>(a.reshape({3, -1}).at(1)), (std::vector<float>{4, 5, 6, 7}));
  EXPECT_EQ(item<float>(a.at(2).at(1)), 7.0f);
  EXPECT_EQ(item<double>(a.reshape({12}).at(11)), 11.0);
  EXPECT_TRUE(to_vector<float>(a.slice(4, 4)).empty());
}

// ---- engine-backed arrays ---------------------------------------------------------------------

TEST(NDArray, EmptyArraysAreAlignedAndOwnAVar) {
  for (const Shape& s : {Shape{}, Shape{0}, Shape{1}, Shape{3, 5}, Shape{1000}}) {
    NDArray a = empty(s, DType::kFloat16);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(a.raw_data()) % 64, 0u) << s.to_string();
    EXPECT_NE(a.var(), nullptr);
    EXPECT_EQ(a.shape(), s);
    EXPECT_EQ(a.dtype(), DType::kFloat16);
  }
  NDArray a = empty({2});
  NDArray b = empty({2});
  EXPECT_NE(a.var(), b.var());
  EXPECT_NE(a.raw_data(), b.raw_data());
}

TEST(NDArray, EmptyRejectsNegativeExtents) {
  EXPECT_THAT(error_of<ShapeError>([] {
                empty({2, -1});
              }),
              HasSubstr("empty: shape [2, -1] has a negative extent at axis 1"));
}

TEST(NDArray, FromVectorConvertsAndChecksTheCount) {
  NDArray h = from_vector<double>({0.5, -2.0, 65504.0, 1e6}, {4}, DType::kFloat16);
  EXPECT_EQ(h.dtype(), DType::kFloat16);
  const std::vector<float> back = to_vector<float>(h);
  EXPECT_EQ(back[0], 0.5f);
  EXPECT_EQ(back[1], -2.0f);
  EXPECT_EQ(back[2], 65504.0f);
  EXPECT_TRUE(std::isinf(back[3]));
  EXPECT_EQ(to_vector<int64_t>(from_vector<float>({1.9f, -2.5f, 3.0f}, {3}, DType::kInt32)),
            (std::vector<int64_t>{1, -2, 3}));
  EXPECT_EQ(to_vector<uint8_t>(from_vector<float>({0.0f, 2.0f}, {2}, DType::kBool)),
            (std::vector<uint8_t>{0, 1}));
  EXPECT_THAT(error_of<ShapeError>([] {
                from_vector<float>({1, 2, 3}, {2, 2});
              }),
              HasSubstr("from_vector: got 3 values for shape [2, 2], expected 4"));
}

TEST(NDArray, ItemNeedsExactlyOneElement) {
  EXPECT_EQ(item<int32_t>(from_vector<int32_t>({42}, {})), 42);
  EXPECT_EQ(item<float>(from_vector<int32_t>({42}, {1, 1})), 42.0f);
  NDArray a = from_vector(iota(4), {2, 2});
  EXPECT_THAT(error_of<ValueError>([&] { item<float>(a); }),
              HasSubstr("item: expected an array with exactly one element, got shape [2, 2]"));
  EXPECT_THAT(error_of<ValueError>([] { item<float>(NDArray()); }), HasSubstr("<undefined>"));
}

TEST(NDArray, PrintsLikeNumPy) {
  auto str = [](const NDArray& a) {
    std::ostringstream os;
    os << a;
    return os.str();
  };
  EXPECT_EQ(str(from_vector<float>({1, 2, 3, 4}, {2, 2})),
            "array([[1., 2.],\n       [3., 4.]], dtype=float32)");
  EXPECT_EQ(str(from_vector<int32_t>({1, -2, 3}, {3})), "array([1, -2, 3], dtype=int32)");
  EXPECT_EQ(str(from_vector<double>({2.5}, {})), "array(2.5, dtype=float64)");
  EXPECT_EQ(str(from_vector(iota(10), {10})),
            "array([0., 1., 2., ..., 7., 8., 9.], dtype=float32)");
  EXPECT_EQ(str(NDArray()), "array(<undefined>)");
}

// ---- storage release ------------------------------------------------------------------------

void expect_storage_returns_to_pool() {
  wait_all();
  constexpr int64_t kCount = 1 << 18;  // 1 MiB of float32
  const int64_t before = memory_stats(cpu()).bytes_in_use;
  {
    NDArray a = from_vector(std::vector<float>(kCount, 1.0f), {kCount});  // a pending write
    NDArray view = a.reshape({512, -1}).slice(1, 3);
    EXPECT_GE(memory_stats(cpu()).bytes_in_use, before + kCount * 4);
    a = NDArray();  // the view still holds the storage
    wait_all();
    EXPECT_GE(memory_stats(cpu()).bytes_in_use, before + kCount * 4);
    EXPECT_EQ(to_vector<float>(view).size(), 1024u);
  }
  wait_all();
  EXPECT_EQ(memory_stats(cpu()).bytes_in_use, before);

  // Dropped while its write is still queued: released after the write, not before.
  for (int i = 0; i < 20; ++i) {
    from_vector(std::vector<float>(kCount, static_cast<float>(i)), {kCount});
  }
  wait_all();
  EXPECT_EQ(memory_stats(cpu()).bytes_in_use, before);
}

TEST(NDArray, StorageReturnsToThePoolAfterTheLastHandle) { expect_storage_returns_to_pool(); }

TEST(NDArray, StorageReturnsToThePoolUnderBothEngines) {
  for (EngineKind kind : {EngineKind::kNaive, EngineKind::kThreaded}) {
    SCOPED_TRACE(engine_kind_name(kind));
    ScopedEngine scoped(kind);
    expect_storage_returns_to_pool();
  }
}

TEST(NDArray, RepeatedAllocationsHitThePool) {
  wait_all();
  constexpr int64_t kCount = 54321;
  { NDArray warm = empty({kCount}, DType::kFloat64); }
  wait_all();
  const MemoryStats before = memory_stats(cpu());
  for (int i = 0; i < 10; ++i) {
    NDArray a = empty({kCount}, DType::kFloat64);
  }
  wait_all();
  const MemoryStats after = memory_stats(cpu());
  EXPECT_EQ(after.num_allocs - before.num_allocs, 10);
  EXPECT_EQ(after.num_pool_hits - before.num_pool_hits, 10);
  EXPECT_EQ(after.bytes_in_use, before.bytes_in_use);
}

}  // namespace
}  // namespace janus
