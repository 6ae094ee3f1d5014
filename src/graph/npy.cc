// The .npy reader: magic, version, a Python-dict header, then the raw data.
#include "janus/graph/npy.h"

#include <charconv>
#include <cstring>
#include <fstream>
#include <limits>
#include <regex>
#include <sstream>

#include "janus/base/error.h"
#include "janus/engine/array.h"

namespace janus::graph {

NDArray load_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  JANUS_CHECK(in.good(), IOError, "cannot open '{}' for reading", path);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  const std::string bytes = buffer.str();
  auto fail = [&](const std::string& what) {
    throw FormatError(fmt::format("npy file '{}': {}", path, what));
  };
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0)
    fail("no .npy magic at the start");
  const int major = static_cast<unsigned char>(bytes[6]);
  size_t header_len = 0, offset = 0;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) |
                 static_cast<size_t>(static_cast<unsigned char>(bytes[9])) << 8;
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) fail("truncated header");
    for (int i = 0; i < 4; ++i)
      header_len |= static_cast<size_t>(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
    offset = 12;
  } else {
    fail(fmt::format("format version {} is not supported, expected 1, 2 or 3", major));
  }
  if (header_len > bytes.size() - offset) fail("the header runs past the end of the file");
  const std::string header = bytes.substr(offset, header_len);
  std::smatch m;
  if (!std::regex_search(header, m, std::regex(R"('descr'\s*:\s*'([<>|=])([a-z])(\d+)')"))) {
    fail("the header has no 'descr'");
  }
  const std::string kind = m[2].str() + m[3].str();
  if (m[1] == ">") fail("big-endian data is not supported");
  DType dtype;
  if (kind == "f4")
    dtype = DType::kFloat32;
  else if (kind == "f8")
    dtype = DType::kFloat64;
  else if (kind == "i4")
    dtype = DType::kInt32;
  else if (kind == "i8")
    dtype = DType::kInt64;
  else if (kind == "u1")
    dtype = DType::kUInt8;
  else if (kind == "b1")
    dtype = DType::kBool;
  else
    fail(fmt::format("dtype '{}' is not supported, expected f4, f8, i4, i8, u1 or b1", kind));
  if (std::regex_search(header, std::regex(R"('fortran_order'\s*:\s*True)"))) {
    fail("Fortran-order arrays are not supported, save with C order");
  }
  if (!std::regex_search(header, m, std::regex(R"('shape'\s*:\s*\(([^)]*)\))"))) {
    fail("the header has no 'shape'");
  }
  std::vector<int64_t> dims;
  const std::string shape_text = m[1].str();
  const std::regex extent(R"([^,\s]+)");
  for (std::sregex_iterator it(shape_text.begin(), shape_text.end(), extent), end; it != end;
       ++it) {
    const std::string text = it->str();
    int64_t d = 0;
    const auto [stop, ec] = std::from_chars(text.data(), text.data() + text.size(), d);
    if (ec != std::errc() || stop != text.data() + text.size() || d < 0) {
      fail(fmt::format("the shape ({}) has the extent {}, expected an integer from 0 to {}",
                       shape_text, text, std::numeric_limits<int64_t>::max()));
    }
    dims.push_back(d);
  }
  const Shape shape(dims);
  int64_t numel = 0;
  try {
    numel = shape.numel();
  } catch (const ShapeError& e) {
    fail(e.what());
  }
  const size_t held = bytes.size() - (offset + header_len);
  size_t needed = 0;
  if (__builtin_mul_overflow(static_cast<size_t>(numel), dtype_size(dtype), &needed)) {
    fail(fmt::format("shape {} of {} needs more than {} data bytes, the file holds {}", shape,
                     dtype_name(dtype), std::numeric_limits<size_t>::max(), held));
  }
  if (held != needed) {
    fail(fmt::format("shape {} of {} needs {} data bytes, the file holds {}", shape,
                     dtype_name(dtype), needed, held));
  }
  const size_t data_offset = offset + header_len;
  return from_host(bytes.data() + data_offset, dtype, numel, shape, dtype, cpu());
}

}  // namespace janus::graph
