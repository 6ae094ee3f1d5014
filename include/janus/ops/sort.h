// Ordering: sort, argsort, topk, and the gather and scatter along one axis that select by their
// positions and route their gradients. Layer: ops.
//
// NumPy's order: ascending, NaN after every number, ties by position (a stable sort);
// descending puts NaN first and keeps ties by position.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "janus/core/ndarray.h"

namespace janus {

/// x's elements in order along `axis` (negative from the end).
NDArray sort(const NDArray& x, int64_t axis = -1, bool descending = false);
/// The positions that sort `x` along `axis`, in `dtype` (int32, int64, float32 or float64).
NDArray argsort(const NDArray& x, int64_t axis = -1, bool descending = false,
                DType dtype = DType::kInt64);
/// MXNet's topk: the k largest (smallest when is_ascend) elements along `axis`. Returns two
/// arrays: the one ret_typ asks for ("value": the values, "indices": their positions in
/// `dtype`, "mask": x's shape with 1 at the chosen positions, "both": the values), then the
/// positions in `dtype`.
std::vector<NDArray> topk(const NDArray& x, int64_t axis = -1, int64_t k = 1,
                          const std::string& ret_typ = "indices", bool is_ascend = false,
                          DType dtype = DType::kFloat32);
/// Positions (int64, v's shape) at which v's values would go into the sorted 1-D array `a` to
/// keep it sorted: before the equal elements, or after them when `right` (NumPy's searchsorted).
NDArray searchsorted(const NDArray& a, const NDArray& v, bool right = false);
/// x's elements at `indices` along `axis` (NumPy's take_along_axis without broadcasting):
/// indices have x's shape except along the axis and hold positions in [-n, n).
NDArray take_along_axis(const NDArray& x, const NDArray& indices, int64_t axis = -1);
/// Zeros with extent n along `axis` and dy's other extents, with dy[..., j, ...] added at
/// position indices[..., j, ...] (in [-n, n)) of the axis: the adjoint of take_along_axis.
NDArray scatter_along_axis(const NDArray& dy, const NDArray& indices, int64_t axis, int64_t n);

}  // namespace janus
