// The reader of MXNet's .params files (the NDArray list of MXNet 1.x's NDArray::Save). Every
// length is checked against what is left of the file before it is used.
#include "janus/graph/mxnet_params.h"

#include <fmt/format.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>

#include "janus/base/error.h"
#include "janus/engine/array.h"

namespace janus::graph {
namespace {

static_assert(std::endian::native == std::endian::little,
              "the .params reader copies little-endian bytes as they are");

constexpr uint64_t kListMagic = 0x112;  // the NDArray list: magic, reserved, arrays, names
// Per-array magic numbers, oldest first. Before kV1 an array started with its ndim (uint32)
// and uint32 extents.
constexpr uint32_t kV1 = 0xF993FAC8;  // int64 extents, no storage type
constexpr uint32_t kV2 = 0xF993FAC9;  // storage type; ndim 0 = no data
constexpr uint32_t kV3 = 0xF993FACA;  // numpy mode: ndim 0 = a scalar, -1 = unknown
constexpr int32_t kMaxDims = 32;
constexpr int32_t kDenseStorage = 0;
constexpr uint64_t kMaxNameBytes = 1 << 20;

// mshadow's type flags.
struct TypeFlag {
  int32_t flag;
  DType dtype;
};
constexpr TypeFlag kTypeFlags[] = {
    {0, DType::kFloat32}, {1, DType::kFloat64}, {2, DType::kFloat16}, {3, DType::kUInt8},
    {4, DType::kInt32},   {6, DType::kInt64},   {7, DType::kBool},    {12, DType::kBFloat16},
};
constexpr std::string_view kUnsupportedFlags[] = {"", "", "",      "",       "",       "int8",
                                                  "", "", "int16", "uint16", "uint32", "uint64"};

// A cursor over the file's bytes; every read is checked against the end.
class Cursor {
 public:
  Cursor(std::span<const char> bytes, std::string_view source) : bytes_(bytes), source_(source) {}

  template <typename... Args>
  [[noreturn]] void fail_at(size_t offset, fmt::format_string<Args...> f, Args&&... args) const {
    throw FormatError(fmt::format("MXNet params file '{}': at byte {}: {}", source_, offset,
                                  fmt::format(f, std::forward<Args>(args)...)));
  }

  size_t offset() const { return pos_; }
  size_t left() const { return bytes_.size() - pos_; }

  template <typename T>
  T read(std::string_view what) {
    if (left() < sizeof(T)) {
      fail_at(pos_, "the file ends inside {} ({} bytes left, {} needed): truncated", what, left(),
              sizeof(T));
    }
    T v;
    std::memcpy(&v, bytes_.data() + pos_, sizeof v);
    pos_ += sizeof v;
    return v;
  }

  const char* take(uint64_t n, std::string_view what) {
    if (left() < n) {
      fail_at(pos_, "{} needs {} bytes but only {} are left: truncated", what, n, left());
    }
    const char* p = bytes_.data() + pos_;
    pos_ += static_cast<size_t>(n);
    return p;
  }

 private:
  std::span<const char> bytes_;
  std::string_view source_;
  size_t pos_ = 0;
};

DType dtype_of_flag(const Cursor& c, size_t at, int32_t flag, size_t index) {
  for (const TypeFlag& t : kTypeFlags) {
    if (t.flag == flag) return t.dtype;
  }
  if (flag >= 0 && static_cast<size_t>(flag) < std::size(kUnsupportedFlags) &&
      !kUnsupportedFlags[flag].empty()) {
    c.fail_at(at, "array {} has dtype {}, which Janus does not support", index,
              kUnsupportedFlags[flag]);
  }
  c.fail_at(at, "array {} has an unknown dtype flag {}", index, flag);
}

// The extents of one array. `wide`: int64 extents (else uint32, the oldest layout);
// `numpy`: -1 marks an unknown extent and ndim 0 a scalar.
Shape read_shape(Cursor& c, size_t index, bool wide, bool numpy, int32_t ndim) {
  const size_t at = c.offset();
  if (ndim < 0 || ndim > kMaxDims) {
    c.fail_at(at, "array {} has {} dimensions, expected 0 to {}", index, ndim, kMaxDims);
  }
  std::vector<int64_t> dims;
  for (int32_t d = 0; d < ndim; ++d) {
    const size_t dim_at = c.offset();
    const int64_t v = wide ? c.read<int64_t>("a shape") : c.read<uint32_t>("a shape");
    if (v < 0) {
      c.fail_at(dim_at, "array {} has extent {} at axis {}{}", index, v, d,
                numpy && v == -1 ? " (unknown: the array has no data)" : ", expected >= 0");
    }
    dims.push_back(v);
  }
  return Shape(std::move(dims));
}

NDArray read_array(Cursor& c, size_t index, Device device) {
  const size_t start = c.offset();
  const uint32_t magic = c.read<uint32_t>("an array's magic number");
  const bool v2_or_v3 = magic == kV2 || magic == kV3;
  const bool numpy = magic == kV3;
  if (v2_or_v3) {
    const size_t at = c.offset();
    const auto stype = c.read<int32_t>("a storage type");
    if (stype != kDenseStorage) {
      c.fail_at(at, "array {} has storage type {} ({}), Janus reads dense arrays only", index,
                stype,
                stype == 1   ? "row_sparse"
                : stype == 2 ? "csr"
                             : "unknown");
    }
  }
  Shape shape;
  if (magic == kV1 || v2_or_v3) {
    const size_t at = c.offset();
    const auto ndim = c.read<int32_t>("a shape's rank");
    if (numpy && ndim == -1) c.fail_at(at, "array {} has an unknown shape (no data)", index);
    shape = read_shape(c, index, /*wide=*/true, numpy, ndim);
    if (!numpy && ndim == 0) c.fail_at(at, "array {} has no shape (no data)", index);
  } else {
    // The oldest layout: `magic` was the rank.
    if (magic > static_cast<uint32_t>(kMaxDims)) {
      c.fail_at(start, "array {} starts with 0x{:08X}, not an NDArray magic number", index, magic);
    }
    if (magic == 0) c.fail_at(start, "array {} has no shape (no data)", index);
    shape = read_shape(c, index, /*wide=*/false, /*numpy=*/false, static_cast<int32_t>(magic));
  }
  const size_t ctx_at = c.offset();
  const auto dev_type = c.read<int32_t>("a context");
  c.read<int32_t>("a context");  // device id: Janus loads onto `device`
  if (dev_type != 1 && dev_type != 2 && dev_type != 3 && dev_type != 5) {
    c.fail_at(ctx_at,
              "array {} has device type {}, expected 1 (cpu), 2 (gpu), 3 (cpu_pinned) "
              "or 5 (cpu_shared)",
              index, dev_type);
  }
  const size_t flag_at = c.offset();
  const DType dtype = dtype_of_flag(c, flag_at, c.read<int32_t>("a dtype flag"), index);
  uint64_t nbytes = dtype_size(dtype);
  for (int64_t d : shape.dims()) {
    if (__builtin_mul_overflow(nbytes, static_cast<uint64_t>(d), &nbytes)) {
      c.fail_at(start, "array {} of shape {} has more than 2^64 bytes", index, shape);
    }
  }
  const char* data =
      c.take(nbytes, fmt::format("the data of array {} ({} {})", index, shape, dtype_name(dtype)));
  return from_host(data, dtype, shape.numel(), shape, dtype, device);
}

std::string read_name(Cursor& c) {
  const size_t at = c.offset();
  const auto n = c.read<uint64_t>("a name's length");
  if (n > kMaxNameBytes)
    c.fail_at(at, "a name of {} bytes, more than {} allowed", n, kMaxNameBytes);
  const char* p = c.take(n, "a name");
  return std::string(p, static_cast<size_t>(n));
}

// "arg:w" -> "w", "aux:running_mean" -> "running_mean"; other names stay.
std::string strip_role(std::string name) {
  if (name.starts_with("arg:") || name.starts_with("aux:")) return name.substr(4);
  return name;
}

}  // namespace

bool is_mxnet_params(std::span<const char> bytes) {
  uint64_t magic = 0;
  if (bytes.size() < sizeof magic) return false;
  std::memcpy(&magic, bytes.data(), sizeof magic);
  return magic == kListMagic;
}

NamedArrays parse_mxnet_params(std::span<const char> bytes, std::string_view source,
                               Device device) {
  Cursor c(bytes, source);
  const auto magic = c.read<uint64_t>("the file's magic number");
  if (magic != kListMagic) {
    c.fail_at(0, "magic number 0x{:X}, expected 0x{:X} (not an MXNet .params file?)", magic,
              kListMagic);
  }
  c.read<uint64_t>("the reserved field");
  const size_t count_at = c.offset();
  const auto count = c.read<uint64_t>("the array count");
  // Each array takes at least 16 bytes: a bound that keeps a corrupt count from reserving memory.
  if (count > c.left() / 16) {
    c.fail_at(count_at, "{} arrays announced, but {} bytes cannot hold them: truncated or corrupt",
              count, c.left());
  }
  std::vector<NDArray> arrays;
  for (uint64_t i = 0; i < count; ++i) arrays.push_back(read_array(c, i, device));
  const size_t names_at = c.offset();
  const auto name_count = c.read<uint64_t>("the name count");
  if (name_count != count && name_count != 0) {
    c.fail_at(names_at, "{} names for {} arrays", name_count, count);
  }
  NamedArrays out;
  std::set<std::string> seen;
  for (uint64_t i = 0; i < count; ++i) {
    const size_t at = c.offset();
    std::string name = name_count == 0 ? std::to_string(i) : strip_role(read_name(c));
    if (name.empty()) c.fail_at(at, "array {} has an empty name", i);
    if (!seen.insert(name).second) c.fail_at(at, "two arrays are named '{}'", name);
    out.emplace_back(std::move(name), std::move(arrays[i]));
  }
  if (c.left() != 0) c.fail_at(c.offset(), "{} bytes follow the last name", c.left());
  return out;
}

NamedArrays load_mxnet_params(const std::string& path, Device device) {
  std::ifstream in(path, std::ios::binary);
  JANUS_CHECK(in.good(), IOError, "cannot open MXNet params file '{}': {}", path,
              std::strerror(errno));
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  JANUS_CHECK(!in.bad(), IOError, "reading MXNet params file '{}' failed", path);
  return parse_mxnet_params(bytes, path, device);
}

}  // namespace janus::graph
