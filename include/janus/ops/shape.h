// Operator API of the shape family (see ops.h for the conventions). Layer: ops.
#pragma once

#include <cstdint>
#include <vector>

#include "janus/core/ndarray.h"

namespace janus {

/// The axes of `x` permuted: result.shape[i] = x.shape[axes[i]]; reversed when `axes` is empty.
/// Throws ValueError unless `axes` is a permutation of [0, ndim) (negative counted from the end).
NDArray transpose(const NDArray& x, std::vector<int64_t> axes = {});
/// `x` with a new axis of extent 1 at `axis` in [-ndim-1, ndim].
NDArray expand_dims(const NDArray& x, int64_t axis);
/// `x` without the given axes, each of extent 1 (ShapeError otherwise); every extent-1 axis
/// when `axes` is empty.
NDArray squeeze(const NDArray& x, std::vector<int64_t> axes = {});
/// [d0, d1, ..., dk] -> [d0, d1 * ... * dk]; a 1-d [d0] gives [d0, 1].
NDArray flatten(const NDArray& x);
/// `x` repeated along broadcast axes to `shape` (NumPy rules); the gradient is sum_to.
NDArray broadcast_to(const NDArray& x, const Shape& shape);
/// `a` and `b` joined along `axis`; other extents must match. Two inputs (chain for more).
NDArray concat(const NDArray& a, const NDArray& b, int64_t axis = 0);
/// `a` and `b` of one shape joined along a new axis of extent 2 at `axis`.
NDArray stack(const NDArray& a, const NDArray& b, int64_t axis = 0);
/// The range [begin, end) of `axis`; bounds in [-extent, extent] (IndexError otherwise),
/// negative from the end, empty when end <= begin.
NDArray slice_axis(const NDArray& x, int64_t axis, int64_t begin, int64_t end);
/// `sections` equal parts of `x` along `axis` (ValueError when the extent does not divide), each
/// a slice_axis call.
std::vector<NDArray> split(const NDArray& x, int64_t sections, int64_t axis = 0);
/// A strided box: on leading axis i, indices begin[i], begin[i] + step[i], ... below end[i];
/// bounds in [-extent, extent], positive steps (all 1 when `step` is empty), later axes whole.
///   slice(x, {0, 1}, {2, 5}, {1, 2})  // x[0:2, 1:5:2]
NDArray slice(const NDArray& x, std::vector<int64_t> begin, std::vector<int64_t> end,
              std::vector<int64_t> step = {});
/// `x` surrounded by `value`: `widths` is (before, after) for each axis, all >= 0.
NDArray pad(const NDArray& x, std::vector<int64_t> widths, double value = 0.0);
/// Entries of `x` at int32/int64 `indices` along `axis` (NumPy's take): the result has shape
/// x.shape[:axis] + indices.shape + x.shape[axis+1:]. Indices in [-extent, extent); an
/// out-of-range one raises IndexError when the result is read. Differentiable in `x` only.
NDArray take(const NDArray& x, const NDArray& indices, int64_t axis = 0);
/// Entries of `x` at tuples of int32/int64 positions down the first axis of `indices`
/// (MXNet's gather_nd): indices of shape (M, Y...) with 1 <= M <= x.ndim give a result of shape
/// Y + x.shape[M:], y[j...] = x[indices[0, j...], ..., indices[M-1, j...]]. Positions in
/// [-extent, extent); an out-of-range one raises IndexError when the result is read.
/// Differentiable in `x` only.
NDArray gather_nd(const NDArray& x, const NDArray& indices);
/// The leading box of `x` with `like`'s extents on `axes` (MXNet's slice_like; negative from
/// the end of x; every axis when empty, which needs as many dimensions in both).
NDArray slice_like(const NDArray& x, const NDArray& like, std::vector<int64_t> axes = {});
/// `x`'s elements in `like`'s shape (MXNet's reshape_like; as many elements in both). With
/// `x_axes` = {begin, end} (or {begin}: to the last axis) only those axes of x are replaced, by
/// the axes `like_axes` of like (same form; empty: every axis); negative values count from the
/// end.
NDArray reshape_like(const NDArray& x, const NDArray& like, std::vector<int64_t> x_axes = {},
                     std::vector<int64_t> like_axes = {});
/// `x` with `updates` added at `indices` along `axis` (repeats accumulate); `updates` has the
/// shape take(x, indices, axis) would have. The adjoint of take.
NDArray scatter_add(const NDArray& x, const NDArray& indices, const NDArray& updates,
                    int64_t axis = 0);

}  // namespace janus
