// Arrays in files: NumPy's .npy format (format versions 1-3, little-endian, C order), read by
// `janus run --input`, and the files of the Python frontend's np.load and np.save. Layer: graph,
// beside safetensors.
#pragma once

#include <string>
#include <string_view>

#include "janus/core/ndarray.h"

namespace janus::graph {

/// The array in `path`, on the CPU: dtypes <f4, <f8, <f2, <i4, <i8, |u1 and |b1 (float32,
/// float64, float16, int32, int64, uint8, bool), C order. IOError naming the path when it cannot
/// be read; FormatError naming it and the problem when the contents are not such a file (no
/// magic, an unknown version, a header past the end of the file or not a dict of 'descr',
/// 'fortran_order' and 'shape', an unsupported dtype, big-endian or Fortran-order data, data
/// bytes that do not match the shape). Never crashes on any bytes (fuzz/npy_fuzzer.cc).
NDArray load_npy(const std::string& path);

/// The array in the bytes of a .npy file (what np.load reads from a file object), with the
/// errors of load_npy; `name` stands for the file in their messages.
NDArray read_npy(std::string_view bytes, const std::string& name);

/// Writes `array` (waiting for it: a blocker) to `path` in format version 1: the header dict
/// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } padded with spaces and a newline
/// so that the data, little-endian and C order, starts 64-byte aligned, as np.save does. The
/// file is written beside `path` and renamed into place, so a failed save leaves any earlier
/// file intact. TypeError for bfloat16, which has no NumPy dtype; IOError naming the path when
/// it cannot be written.
void save_npy(const std::string& path, const NDArray& array);

}  // namespace janus::graph
