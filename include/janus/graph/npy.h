// Arrays in files: NumPy's .npy format (format versions 1-3, little-endian, C order), the loader
// of `janus run --input` and of the Python frontend's np.load. Layer: graph, beside safetensors.
#pragma once

#include <string>

#include "janus/core/ndarray.h"

namespace janus::graph {

/// The array in `path`: dtypes <f4, <f8, <i4, <i8, |u1 and |b1. IOError naming the path when it
/// cannot be read; FormatError naming it and the problem when the contents are not such a file.
NDArray load_npy(const std::string& path);

}  // namespace janus::graph
