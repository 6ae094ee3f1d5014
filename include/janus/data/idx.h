// Reading IDX files, the format of the MNIST family of datasets, gzip-compressed or not.
// Layer: data.
#pragma once

#include <string>

#include "janus/core/ndarray.h"

namespace janus::data {

/// Reads an IDX file of unsigned bytes (magic 0x0000080N, N the number of dimensions, then N
/// big-endian 32-bit extents, then the bytes row-major) into a uint8 CPU array of that shape.
/// The file may be gzip-compressed (zlib reads plain files unchanged).
///
/// Throws IOError naming the path when the file is missing or cannot be read, and FormatError
/// naming the path and what is wrong when the contents are not such a file: a bad magic number,
/// an unsupported element type, a header or data shorter than the header announces, trailing
/// bytes, or a corrupt gzip stream.
NDArray read_idx(const std::string& path);

}  // namespace janus::data
