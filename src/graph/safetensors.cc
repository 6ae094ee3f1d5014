// The safetensors reader and writer. Every check of a file happens before its bytes are used, so a
// malformed file is a FormatError, never a crash.
#include "janus/graph/safetensors.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <string_view>
#include <tuple>

#include <nlohmann/json.hpp>

#include "janus/base/error.h"
#include "janus/engine/array.h"

namespace janus::graph {
namespace {

static_assert(std::endian::native == std::endian::little,
              "the safetensors reader and writer copy little-endian bytes as they are");

using Json = nlohmann::json;

// Larger headers are refused (the reference implementation's limit too), so a corrupt length
// cannot make the reader allocate without bound.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;
// An array entry is {"shape": [...]} inside the top-level object: nothing legitimate nests
// deeper than this.
constexpr int kMaxJsonDepth = 4;
constexpr std::string_view kMetadataKey = "__metadata__";

struct DTypeCode {
  std::string_view code;
  DType dtype;
};
constexpr DTypeCode kDTypeCodes[] = {
    {"F32", DType::kFloat32},   {"F64", DType::kFloat64}, {"F16", DType::kFloat16},
    {"BF16", DType::kBFloat16}, {"I32", DType::kInt32},   {"I64", DType::kInt64},
    {"U8", DType::kUInt8},      {"BOOL", DType::kBool},
};

std::string_view code_of(DType dtype) {
  for (const auto& c : kDTypeCodes) {
    if (c.dtype == dtype) return c.code;
  }
  JANUS_ASSERT(false, "dtype {} has no safetensors code", dtype_name(dtype));
  return "";
}

const DTypeCode* find_code(std::string_view code) {
  for (const auto& c : kDTypeCodes) {
    if (c.code == code) return &c;
  }
  return nullptr;
}

std::string codes_list() {
  std::vector<std::string_view> codes;
  for (const auto& c : kDTypeCodes) codes.push_back(c.code);
  return fmt::format("{}", fmt::join(codes, ", "));
}

// One array entry of a header, checked.
struct Entry {
  std::string name;
  DType dtype;
  Shape shape;
  uint64_t begin, end;
};

uint64_t read_u64_le(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

std::vector<char> read_file(const std::string& path) {
  std::error_code ec;
  const bool is_dir = std::filesystem::is_directory(path, ec);
  JANUS_CHECK(!is_dir, IOError, "load_safetensors: cannot read '{}': it is a directory", path);
  std::FILE* f = std::fopen(path.c_str(), "rb");
  JANUS_CHECK(f != nullptr, IOError, "load_safetensors: cannot open '{}': {}", path,
              std::strerror(errno));
  std::vector<char> bytes;
  char chunk[1 << 16];
  size_t n;
  while ((n = std::fread(chunk, 1, sizeof chunk, f)) > 0) {
    bytes.insert(bytes.end(), chunk, chunk + n);
  }
  const bool failed = std::ferror(f) != 0;
  const int err = errno;
  std::fclose(f);
  JANUS_CHECK(!failed, IOError, "load_safetensors: error reading '{}': {}", path,
              std::strerror(err));
  return bytes;
}

// The parsed header (an object), with duplicate names and deep nesting refused while parsing.
Json parse_header(const std::string& path, std::string_view text) {
  std::set<std::string> names;
  const Json::parser_callback_t check = [&](int depth, Json::parse_event_t event, Json& parsed) {
    JANUS_CHECK(depth <= kMaxJsonDepth, FormatError,
                "load_safetensors: '{}': the header nests deeper than {} levels, expected "
                "{{name: {{dtype, shape, data_offsets}}}}",
                path, kMaxJsonDepth);
    if (event == Json::parse_event_t::key && depth == 1) {
      const std::string name = parsed.get<std::string>();
      JANUS_CHECK(names.insert(name).second, FormatError,
                  "load_safetensors: '{}': the header names '{}' twice", path, name);
    }
    return true;
  };
  Json header;
  try {
    header = Json::parse(text.begin(), text.end(), check);
  } catch (const Json::exception& e) {
    JANUS_THROW(FormatError, "load_safetensors: '{}': the header is not valid JSON ({})", path,
                e.what());
  }
  JANUS_CHECK(header.is_object(), FormatError,
              "load_safetensors: '{}': the header is a JSON {}, expected an object", path,
              header.type_name());
  return header;
}

Metadata parse_metadata(const std::string& path, const Json& value) {
  JANUS_CHECK(value.is_object(), FormatError,
              "load_safetensors: '{}': __metadata__ is a JSON {}, expected an object of strings",
              path, value.type_name());
  Metadata out;
  for (const auto& [key, v] : value.items()) {
    JANUS_CHECK(v.is_string(), FormatError,
                "load_safetensors: '{}': __metadata__ value of '{}' is a JSON {}, expected a "
                "string",
                path, key, v.type_name());
    out.emplace(key, v.get<std::string>());
  }
  return out;
}

uint64_t unsigned_of(const std::string& path, const std::string& name, const char* field,
                     const Json& v) {
  JANUS_CHECK(v.is_number_unsigned(), FormatError,
              "load_safetensors: '{}': array '{}': {} holds {}, expected non-negative integers",
              path, name, field, v.dump());
  return v.get<uint64_t>();
}

Entry parse_entry(const std::string& path, const std::string& name, const Json& v,
                  uint64_t data_bytes) {
  JANUS_CHECK(v.is_object(), FormatError,
              "load_safetensors: '{}': array '{}' is a JSON {}, expected an object with dtype, "
              "shape and data_offsets",
              path, name, v.type_name());
  for (const char* field : {"dtype", "shape", "data_offsets"}) {
    JANUS_CHECK(v.contains(field), FormatError, "load_safetensors: '{}': array '{}' has no {}",
                path, name, field);
  }
  const Json& dt = v["dtype"];
  JANUS_CHECK(dt.is_string(), FormatError,
              "load_safetensors: '{}': array '{}': dtype is {}, expected a string", path, name,
              dt.dump());
  const DTypeCode* code = find_code(dt.get<std::string>());
  JANUS_CHECK(code != nullptr, FormatError,
              "load_safetensors: '{}': array '{}' has dtype '{}', which Janus does not support "
              "(expected one of {})",
              path, name, dt.get<std::string>(), codes_list());
  const Json& shape = v["shape"];
  JANUS_CHECK(shape.is_array(), FormatError,
              "load_safetensors: '{}': array '{}': shape is {}, expected a list of extents", path,
              name, shape.dump());
  std::vector<int64_t> dims;
  uint64_t numel = 1;
  bool overflow = false;
  for (const Json& d : shape) {
    const uint64_t extent = unsigned_of(path, name, "shape", d);
    JANUS_CHECK(extent <= static_cast<uint64_t>(INT64_MAX), FormatError,
                "load_safetensors: '{}': array '{}': extent {} is too large", path, name, extent);
    dims.push_back(static_cast<int64_t>(extent));
    overflow = overflow || __builtin_mul_overflow(numel, extent, &numel);
  }
  const Json& offsets = v["data_offsets"];
  JANUS_CHECK(offsets.is_array() && offsets.size() == 2, FormatError,
              "load_safetensors: '{}': array '{}': data_offsets is {}, expected [begin, end]", path,
              name, offsets.dump());
  const uint64_t begin = unsigned_of(path, name, "data_offsets", offsets[0]);
  const uint64_t end = unsigned_of(path, name, "data_offsets", offsets[1]);
  JANUS_CHECK(begin <= end && end <= data_bytes, FormatError,
              "load_safetensors: '{}': array '{}': data_offsets [{}, {}] are out of range, "
              "expected 0 <= begin <= end <= {} (the bytes after the header; truncated file?)",
              path, name, begin, end, data_bytes);
  uint64_t bytes = 0;
  overflow = overflow || __builtin_mul_overflow(numel, dtype_size(code->dtype), &bytes);
  JANUS_CHECK(!overflow && bytes == end - begin, FormatError,
              "load_safetensors: '{}': array '{}': data_offsets [{}, {}] span {} bytes, but "
              "{} x {} needs {}",
              path, name, begin, end, end - begin, code->code, Shape(dims),
              overflow ? std::string("more than 2^64") : std::to_string(bytes));
  return Entry{name, code->dtype, Shape(std::move(dims)), begin, end};
}

// The arrays must tile the data exactly (as the format requires): no overlap, no gap, nothing
// after the last one.
void check_tiling(const std::string& path, std::vector<Entry>& entries, uint64_t data_bytes) {
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return std::tie(a.begin, a.end, a.name) < std::tie(b.begin, b.end, b.name);
  });
  uint64_t covered = 0;
  const Entry* previous = nullptr;
  for (const Entry& e : entries) {
    JANUS_CHECK(e.begin >= covered, FormatError,
                "load_safetensors: '{}': arrays '{}' and '{}' overlap (bytes [{}, {}) and [{}, "
                "{}))",
                path, previous ? previous->name : "", e.name, previous ? previous->begin : 0,
                covered, e.begin, e.end);
    JANUS_CHECK(e.begin == covered, FormatError,
                "load_safetensors: '{}': bytes [{}, {}) of the data belong to no array", path,
                covered, e.begin);
    covered = e.end;
    previous = &e;
  }
  JANUS_CHECK(covered == data_bytes, FormatError,
              "load_safetensors: '{}': bytes [{}, {}) of the data belong to no array", path,
              covered, data_bytes);
}

void check_bools(const std::string& path, const Entry& e, const char* data) {
  for (uint64_t i = 0; i < e.end - e.begin; ++i) {
    const auto byte = static_cast<unsigned char>(data[i]);
    JANUS_CHECK(byte <= 1, FormatError,
                "load_safetensors: '{}': array '{}' (BOOL) holds byte {} at element {}, "
                "expected 0 or 1",
                path, e.name, byte, i);
  }
}

}  // namespace

void save_safetensors(const std::string& path, const NamedArrays& arrays,
                      const Metadata& metadata) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header[std::string(kMetadataKey)] = metadata;
  uint64_t offset = 0;
  for (const auto& [name, a] : arrays) {
    JANUS_CHECK(!name.empty() && name != kMetadataKey, ValueError,
                "save_safetensors: '{}': array name '{}' is reserved or empty", path, name);
    JANUS_CHECK(!header.contains(name), ValueError,
                "save_safetensors: '{}': array name '{}' appears twice", path, name);
    JANUS_CHECK(a.defined(), ValueError, "save_safetensors: '{}': array '{}' is undefined", path,
                name);
    const uint64_t end = offset + a.nbytes();
    header[name] = {{"dtype", std::string(code_of(a.dtype()))},
                    {"shape", a.shape().dims()},
                    {"data_offsets", {offset, end}}};
    offset = end;
  }
  std::string text;
  try {
    text = header.dump();
  } catch (const nlohmann::ordered_json::exception& e) {
    JANUS_THROW(ValueError,
                "save_safetensors: '{}': a name or metadata entry is not valid UTF-8 ({})", path,
                e.what());
  }
  text.resize((text.size() + 7) / 8 * 8, ' ');  // the data starts 8-byte aligned

  const std::string tmp = path + ".tmp";
  std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
  JANUS_CHECK(out.is_open(), IOError, "save_safetensors: cannot write '{}': {}", path,
              std::strerror(errno));
  const uint64_t n = text.size();
  char len[8];
  std::memcpy(len, &n, sizeof len);
  out.write(len, sizeof len);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  std::error_code ec;
  try {
    std::vector<char> host;
    for (const auto& [name, a] : arrays) {
      host.resize(a.nbytes());
      // A blocker: rethrows the error of a failed kernel that computed the array.
      if (!host.empty()) copy_to_host(a, host.data(), a.dtype());
      out.write(host.data(), static_cast<std::streamsize>(host.size()));
    }
  } catch (...) {
    out.close();
    std::filesystem::remove(tmp, ec);
    throw;
  }
  out.close();
  if (!out) {
    std::filesystem::remove(tmp, ec);
    JANUS_THROW(IOError, "save_safetensors: writing '{}' failed (disk full?)", path);
  }
  std::filesystem::rename(tmp, path, ec);
  JANUS_CHECK(!ec, IOError, "save_safetensors: cannot move the new file into '{}': {}", path,
              ec.message());
}

NamedArrays load_safetensors(const std::string& path, Metadata* metadata, Device device) {
  const std::vector<char> bytes = read_file(path);
  const uint64_t size = bytes.size();
  JANUS_CHECK(size >= 8, FormatError,
              "load_safetensors: '{}': the file has {} bytes, too few for the 8-byte header "
              "length (truncated or not a safetensors file?)",
              path, size);
  const uint64_t header_bytes = read_u64_le(bytes.data());
  JANUS_CHECK(header_bytes <= kMaxHeaderBytes, FormatError,
              "load_safetensors: '{}': the header length is {} bytes, more than the {} allowed "
              "(not a safetensors file?)",
              path, header_bytes, kMaxHeaderBytes);
  JANUS_CHECK(header_bytes <= size - 8, FormatError,
              "load_safetensors: '{}': the header length is {} bytes but only {} follow the "
              "length field (truncated file?)",
              path, header_bytes, size - 8);
  const Json header =
      parse_header(path, std::string_view(bytes.data() + 8, static_cast<size_t>(header_bytes)));
  const uint64_t data_bytes = size - 8 - header_bytes;
  const char* data = bytes.data() + 8 + header_bytes;

  std::vector<Entry> entries;
  Metadata meta;
  for (const auto& [key, value] : header.items()) {
    if (key == kMetadataKey) {
      meta = parse_metadata(path, value);
      continue;
    }
    entries.push_back(parse_entry(path, key, value, data_bytes));
  }
  check_tiling(path, entries, data_bytes);

  NamedArrays out;
  out.reserve(entries.size());
  for (const Entry& e : entries) {
    const char* p = data + e.begin;
    if (e.dtype == DType::kBool) check_bools(path, e, p);
    out.emplace_back(e.name, from_host(p, e.dtype, e.shape.numel(), e.shape, e.dtype, device));
  }
  if (metadata != nullptr) *metadata = std::move(meta);
  return out;
}

}  // namespace janus::graph
