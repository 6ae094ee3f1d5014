// The .npy reader and writer: magic, version, a Python-dict header, then the raw data
// (https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html).
#include "janus/graph/npy.h"

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <string_view>
#include <vector>

#include "janus/base/error.h"
#include "janus/engine/array.h"

namespace janus::graph {
namespace {

[[noreturn]] void throw_bad_file(const std::string& path, const std::string& what) {
  throw FormatError(fmt::format("npy file '{}': {}", path, what));
}

// NumPy's type codes (without the byte-order mark) of the dtypes that .npy files hold here.
struct NpyType {
  std::string_view code;
  DType dtype;
};
constexpr NpyType kNpyTypes[] = {
    {"f4", DType::kFloat32}, {"f8", DType::kFloat64}, {"f2", DType::kFloat16},
    {"i4", DType::kInt32},   {"i8", DType::kInt64},   {"u1", DType::kUInt8},
    {"b1", DType::kBool},
};
constexpr std::string_view kNpyTypeList = "f4, f8, f2, i4, i8, u1 or b1";

std::optional<DType> dtype_of_code(std::string_view code) {
  for (const NpyType& t : kNpyTypes) {
    if (t.code == code) return t.dtype;
  }
  return std::nullopt;
}

std::optional<std::string_view> code_of_dtype(DType dtype) {
  for (const NpyType& t : kNpyTypes) {
    if (t.dtype == dtype) return t.code;
  }
  return std::nullopt;
}

// The three entries of the header dict, {'descr': '<f4', 'fortran_order': False,
// 'shape': (2, 3), }: a Python literal, read by hand with the subset of the grammar that NumPy
// writes (quoted strings, True/False, a tuple of integers) and whitespace anywhere between tokens.
struct Header {
  std::optional<std::string> descr;
  std::optional<bool> fortran_order;
  std::optional<std::string> shape_text;  // between the parentheses, as written
  std::vector<int64_t> shape;
};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& path) : text_(text), path_(path) {}

  Header parse() {
    Header h;
    expect('{');
    while (!take('}')) {
      const std::string key = parse_string();
      expect(':');
      if (key == "descr") {
        check_unset(h.descr.has_value(), key);
        h.descr = parse_string();
      } else if (key == "fortran_order") {
        check_unset(h.fortran_order.has_value(), key);
        h.fortran_order = parse_bool();
      } else if (key == "shape") {
        check_unset(h.shape_text.has_value(), key);
        parse_shape(h);
      } else {
        fail(
            fmt::format("the header has the key '{}', expected 'descr', "
                        "'fortran_order' and "
                        "'shape'",
                        key));
      }
      if (take('}')) break;
      expect(',');
    }
    skip_space();
    if (pos_ != text_.size()) fail("the header has text after its closing '}'");
    return h;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { throw_bad_file(path_, what); }

  void skip_space() {
    while (pos_ < text_.size() && is_space(text_[pos_])) ++pos_;
  }

  // Skips whitespace, then consumes `c` when it comes next.
  bool take(char c) {
    skip_space();
    if (pos_ == text_.size() || text_[pos_] != c) return false;
    ++pos_;
    return true;
  }

  void expect(char c) {
    if (take(c)) return;
    if (pos_ == text_.size()) fail(fmt::format("the header ends where '{}' was expected", c));
    fail(fmt::format("the header has '{}' at offset {}, expected '{}'", text_[pos_], pos_, c));
  }

  void check_unset(bool set, const std::string& key) const {
    if (set) fail(fmt::format("the header has the key '{}' twice", key));
  }

  // A string in single or double quotes, without escapes (NumPy writes none in these keys and
  // values).
  std::string parse_string() {
    skip_space();
    if (pos_ == text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) {
      fail(fmt::format("the header has no quoted string at offset {}", pos_));
    }
    const char quote = text_[pos_++];
    const size_t end = text_.find(quote, pos_);
    if (end == std::string_view::npos) fail("the header has a string without its closing quote");
    std::string s(text_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return s;
  }

  bool parse_bool() {
    skip_space();
    for (const auto& [word, value] : {std::pair{"True", true}, std::pair{"False", false}}) {
      if (text_.substr(pos_).starts_with(word)) {
        pos_ += std::strlen(word);
        return value;
      }
    }
    fail("the header's 'fortran_order' is not True or False");
  }

  // (), (5,), (2, 3): extents from 0 to the largest int64.
  void parse_shape(Header& h) {
    expect('(');
    const size_t close = text_.find(')', pos_);
    if (close == std::string_view::npos) fail("the header's 'shape' has no closing ')'");
    const std::string_view inside = text_.substr(pos_, close - pos_);
    h.shape_text = std::string(inside);
    pos_ = close + 1;
    size_t at = 0;
    while (at < inside.size()) {
      size_t comma = inside.find(',', at);
      if (comma == std::string_view::npos) comma = inside.size();
      std::string_view item = trim(inside.substr(at, comma - at));
      const bool is_last = comma == inside.size();
      at = comma + 1;
      if (item.empty() && is_last && !h.shape.empty()) break;  // the trailing comma of (5, )
      int64_t d = 0;
      const auto [stop, ec] = std::from_chars(item.data(), item.data() + item.size(), d);
      if (item.empty() || ec != std::errc() || stop != item.data() + item.size() || d < 0) {
        fail(
            fmt::format("the shape ({}) has the extent {}, expected an "
                        "integer from 0 to {}",
                        inside, item, std::numeric_limits<int64_t>::max()));
      }
      h.shape.push_back(d);
    }
  }

  std::string_view text_;
  const std::string& path_;
  size_t pos_ = 0;
};

}  // namespace

NDArray load_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  JANUS_CHECK(in.good(), IOError, "cannot open '{}' for reading", path);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return read_npy(buffer.str(), path);
}

NDArray read_npy(std::string_view bytes, const std::string& path) {
  if (bytes.size() < 10 || !bytes.starts_with("\x93NUMPY"))
    throw_bad_file(path, "no .npy magic at the start");
  const int major = static_cast<unsigned char>(bytes[6]);
  size_t header_len = 0, offset = 0;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) |
                 static_cast<size_t>(static_cast<unsigned char>(bytes[9])) << 8;
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) throw_bad_file(path, "truncated header");
    for (int i = 0; i < 4; ++i)
      header_len |= static_cast<size_t>(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
    offset = 12;
  } else {
    throw_bad_file(path,
                   fmt::format("format version {} is not supported, expected 1, 2 or 3", major));
  }
  if (header_len > bytes.size() - offset)
    throw_bad_file(path, "the header runs past the end of the file");
  const Header h = HeaderParser(bytes.substr(offset, header_len), path).parse();
  if (!h.descr) throw_bad_file(path, "the header has no 'descr'");
  if (!h.fortran_order) throw_bad_file(path, "the header has no 'fortran_order'");
  if (!h.shape_text) throw_bad_file(path, "the header has no 'shape'");
  std::string_view kind = *h.descr;
  if (!kind.empty() && std::string_view("<>|=").find(kind.front()) != std::string_view::npos) {
    if (kind.front() == '>') throw_bad_file(path, "big-endian data is not supported");
    kind.remove_prefix(1);
  }
  const std::optional<DType> dtype = dtype_of_code(kind);
  if (!dtype)
    throw_bad_file(path,
                   fmt::format("dtype '{}' is not supported, expected {}", kind, kNpyTypeList));
  if (*h.fortran_order)
    throw_bad_file(path, "Fortran-order arrays are not supported, save with C order");
  const Shape shape(h.shape);
  int64_t numel = 0;
  try {
    numel = shape.numel();
  } catch (const ShapeError& e) {
    throw_bad_file(path, e.what());
  }
  const size_t held = bytes.size() - (offset + header_len);
  size_t needed = 0;
  if (__builtin_mul_overflow(static_cast<size_t>(numel), dtype_size(*dtype), &needed)) {
    throw_bad_file(
        path, fmt::format("shape {} of {} needs more than {} data bytes, the file holds {}", shape,
                          dtype_name(*dtype), std::numeric_limits<size_t>::max(), held));
  }
  if (held != needed) {
    throw_bad_file(path, fmt::format("shape {} of {} needs {} data bytes, the file holds {}", shape,
                                     dtype_name(*dtype), needed, held));
  }
  const size_t data_offset = offset + header_len;
  return from_host(bytes.data() + data_offset, *dtype, numel, shape, *dtype, cpu());
}

void save_npy(const std::string& path, const NDArray& array) {
  JANUS_CHECK(array.defined(), ValueError, "save_npy: '{}': the array is undefined", path);
  const std::optional<std::string_view> code = code_of_dtype(array.dtype());
  JANUS_CHECK(code.has_value(), TypeError,
              "save_npy: '{}': {} has no NumPy dtype, expected float32, float64, float16, int32, "
              "int64, uint8 or bool",
              path, dtype_name(array.dtype()));
  const char order = dtype_size(array.dtype()) == 1 ? '|' : '<';
  std::string shape;  // (), (5,), (2, 3)
  for (const int64_t d : array.shape().dims())
    shape += fmt::format("{}{}", shape.empty() ? "" : ", ", d);
  if (array.shape().ndim() == 1) shape += ',';
  std::string header = fmt::format("{{'descr': '{}{}', 'fortran_order': False, 'shape': ({}), }}",
                                   order, *code, shape);
  // NumPy pads with 1 to 64 spaces and a newline so that the data starts 64-byte aligned.
  header.append(64 - (10 + header.size() + 1) % 64, ' ');
  header += '\n';
  JANUS_CHECK(header.size() <= 0xffff, ValueError,
              "save_npy: '{}': the header of shape {} is {} bytes, more than format 1 holds", path,
              array.shape(), header.size());
  std::vector<char> data(array.nbytes());
  // A blocker: rethrows the error of a failed kernel that computed the array.
  if (!data.empty()) copy_to_host(array, data.data(), array.dtype(), "save_npy");

  const std::string tmp = path + ".tmp";
  std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
  JANUS_CHECK(out.is_open(), IOError, "save_npy: cannot write '{}': {}", path,
              std::strerror(errno));
  std::string preamble = "\x93NUMPY";
  preamble += {'\x01', '\x00', static_cast<char>(header.size() & 0xff),
               static_cast<char>(header.size() >> 8)};
  out << preamble << header;
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  out.close();
  std::error_code ec;
  if (!out) {
    std::filesystem::remove(tmp, ec);
    throw IOError(fmt::format("save_npy: writing '{}' failed (disk full?)", path));
  }
  std::filesystem::rename(tmp, path, ec);
  JANUS_CHECK(!ec, IOError, "save_npy: cannot move the new file into '{}': {}", path, ec.message());
}

}  // namespace janus::graph
