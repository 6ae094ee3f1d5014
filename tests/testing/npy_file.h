// The bytes of a .npy file made by hand, for the tests of the reader (src/graph/npy_test.cc)
// and of `janus run --input` (tools/): any header dict, valid or not, and any data.
#pragma once

#include <string>

namespace janus::testing {

/// A version-1 .npy file: the header dict padded as NumPy pads it, then `data`.
inline std::string npy(const std::string& header_dict, const std::string& data) {
  std::string header = header_dict;
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  return out + header + data;
}

}  // namespace janus::testing
