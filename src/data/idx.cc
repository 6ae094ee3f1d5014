// IDX reader over zlib's gz* functions (which read plain files unchanged): header, extents,
// data, and the checks that turn a damaged file into a FormatError instead of wrong numbers.
#include "janus/data/idx.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include "janus/base/error.h"
#include "janus/engine/array.h"

namespace janus::data {
namespace {

constexpr uint8_t kUnsignedByte = 0x08;
constexpr int kMaxDims = 8;
// Data is read in chunks into a growing buffer, so a header that announces more than the file
// holds costs no more memory than the file; this only bounds what one array may take.
constexpr uint64_t kMaxBytes = uint64_t{1} << 36;
constexpr size_t kChunk = size_t{1} << 22;

struct GzCloser {
  void operator()(gzFile f) const { gzclose(f); }
};
using GzHandle = std::unique_ptr<gzFile_s, GzCloser>;

/// Throws the error that zlib reports for `f` after a read came up short or failed: IOError for
/// a system error, FormatError for a corrupt or truncated stream. Returns when zlib reports
/// nothing wrong (a plain end of file).
void throw_if_stream_error(gzFile f, const std::string& path, std::string_view while_reading) {
  int code = Z_OK;
  const char* message = gzerror(f, &code);
  if (code == Z_OK) return;
  if (code == Z_ERRNO) {
    throw IOError(fmt::format("idx file '{}': cannot read {}: {}", path, while_reading,
                              std::strerror(errno)));
  }
  const char* what = code == Z_BUF_ERROR ? "truncated gzip stream" : "corrupt gzip stream";
  throw FormatError(fmt::format("idx file '{}': {} while reading {} (zlib: {})", path, what,
                                while_reading, message != nullptr ? message : "no message"));
}

/// Reads up to `n` bytes; returns how many were read (fewer only at the end of the stream).
size_t read_some(gzFile f, void* out, size_t n, const std::string& path,
                 std::string_view while_reading) {
  size_t done = 0;
  while (done < n) {
    const auto want = static_cast<unsigned>(std::min(n - done, kChunk));
    const int got = gzread(f, static_cast<char*>(out) + done, want);
    if (got < 0) throw_if_stream_error(f, path, while_reading);
    if (got <= 0) break;
    done += static_cast<size_t>(got);
  }
  return done;
}

uint32_t big_endian_u32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

}  // namespace

NDArray read_idx(const std::string& path) {
  errno = 0;
  GzHandle file(gzopen(path.c_str(), "rb"));
  if (!file) {
    throw IOError(fmt::format("idx file '{}': cannot open: {}", path,
                              errno != 0 ? std::strerror(errno) : "out of memory"));
  }
  gzbuffer(file.get(), 1 << 17);
  gzFile f = file.get();

  uint8_t magic[4];
  const size_t got_magic = read_some(f, magic, 4, path, "the magic number");
  if (got_magic < 4) {
    throw_if_stream_error(f, path, "the magic number");
    throw FormatError(
        fmt::format("idx file '{}': truncated: {} bytes, expected at least 4 (the "
                    "magic number)",
                    path, got_magic));
  }
  const uint32_t magic_number = big_endian_u32(magic);
  JANUS_CHECK(magic[0] == 0 && magic[1] == 0, FormatError,
              "idx file '{}': bad magic number 0x{:08x}, expected 0x000008NN (an IDX file of "
              "unsigned bytes with NN dimensions)",
              path, magic_number);
  JANUS_CHECK(magic[2] == kUnsignedByte, FormatError,
              "idx file '{}': magic number 0x{:08x} has element type 0x{:02x}, only 0x08 "
              "(unsigned byte) is supported",
              path, magic_number, magic[2]);
  const int ndim = magic[3];
  JANUS_CHECK(ndim >= 1 && ndim <= kMaxDims, FormatError,
              "idx file '{}': magic number 0x{:08x} announces {} dimensions, expected 1 to {}",
              path, magic_number, ndim, kMaxDims);

  std::vector<uint8_t> header(static_cast<size_t>(ndim) * 4);
  const size_t got_header = read_some(f, header.data(), header.size(), path, "the extents");
  if (got_header < header.size()) {
    throw_if_stream_error(f, path, "the extents");
    throw FormatError(
        fmt::format("idx file '{}': truncated header: {} bytes of extents, "
                    "expected {} ({} dimensions)",
                    path, got_header, header.size(), ndim));
  }
  std::vector<int64_t> dims(static_cast<size_t>(ndim));
  // `bound` counts a zero extent as 1, so that it can neither wrap around (three extents of
  // 2^24, 2^12 and 2^28 multiply to 2^64 == 0 in 64 bits) nor hide huge extents behind a zero.
  uint64_t bound = 1;
  for (int i = 0; i < ndim; ++i) {
    const uint32_t extent = big_endian_u32(&header[static_cast<size_t>(i) * 4]);
    dims[static_cast<size_t>(i)] = extent;
    const uint64_t factor = std::max<uint64_t>(extent, 1);
    JANUS_CHECK(bound <= kMaxBytes / factor, FormatError,
                "idx file '{}': extents {} announce more than {} bytes (a zero extent counted "
                "as 1)",
                path, fmt::join(dims.begin(), dims.begin() + i + 1, ", "), kMaxBytes);
    bound *= factor;
  }
  uint64_t total = 1;
  for (const int64_t d : dims) total *= static_cast<uint64_t>(d);
  const Shape shape(dims);

  std::vector<uint8_t> data;
  while (data.size() < total) {
    const size_t chunk = std::min<uint64_t>(total - data.size(), kChunk);
    const size_t old = data.size();
    data.resize(old + chunk);
    const size_t got = read_some(f, data.data() + old, chunk, path, "the data");
    data.resize(old + got);
    if (got < chunk) break;
  }
  if (data.size() < total) {
    throw_if_stream_error(f, path, "the data");
    throw FormatError(
        fmt::format("idx file '{}': truncated: {} bytes of data, expected {} for "
                    "shape {}",
                    path, data.size(), total, shape));
  }
  // Reading past the data also makes zlib check the gzip trailer (CRC and length).
  uint8_t extra = 0;
  const size_t got_extra = read_some(f, &extra, 1, path, "the end of the file");
  throw_if_stream_error(f, path, "the end of the file");
  JANUS_CHECK(got_extra == 0, FormatError,
              "idx file '{}': trailing bytes after the {} bytes of data announced by shape {}",
              path, total, shape);

  // A new array that nothing else holds yet: the host may fill it directly.
  NDArray out = empty(shape, DType::kUInt8, cpu());
  if (total > 0) std::memcpy(out.raw_data(), data.data(), total);
  return out;
}

}  // namespace janus::data
