// Key sharding, element sums and the blocking point-to-point transfers of the parameter servers.
#include "ps_protocol.h"

#include <cstdlib>
#include <cstring>

#include "janus/base/error.h"

namespace janus::dist::ps {

uint64_t big_array_bound() {
  const char* v = std::getenv("JANUS_PS_BIGARRAY_BOUND");
  if (v == nullptr || *v == '\0') return kDefaultBigArrayBound;
  char* end = nullptr;
  const unsigned long long bound = std::strtoull(v, &end, 10);
  JANUS_CHECK(end != v && *end == '\0' && bound > 0, ValueError,
              "dist: JANUS_PS_BIGARRAY_BOUND='{}' is not valid; expected a positive number of "
              "bytes",
              v);
  return bound;
}

std::vector<Part> split_key(int64_t key_id, int64_t elements, size_t element_size,
                            int num_servers) {
  const uint64_t bytes = static_cast<uint64_t>(elements) * element_size;
  if (num_servers == 1 || bytes < big_array_bound() || elements < num_servers) {
    const auto home = static_cast<int>(static_cast<uint64_t>(key_id) % num_servers);
    return {Part{home, 0, elements}};
  }
  std::vector<Part> parts;
  for (int s = 0; s < num_servers; ++s) {
    const int64_t begin = elements * s / num_servers;
    const int64_t end = elements * (s + 1) / num_servers;
    parts.push_back(Part{s, begin, end - begin});
  }
  return parts;
}

int64_t string_key_id(const std::string& key) {
  uint64_t h = 14695981039346656037ULL;  // FNV-1a, 64 bits
  for (const char c : key) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  return static_cast<int64_t>(h | (uint64_t{1} << 63));
}

bool is_summable(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
    case DType::kFloat64:
    case DType::kInt32:
    case DType::kInt64:
    case DType::kUInt8:
      return true;
    default:
      return false;
  }
}

namespace {
template <typename T>
void add_typed(void* dst, const void* src, size_t n) {
  T* d = static_cast<T*>(dst);
  const T* s = static_cast<const T*>(src);
  for (size_t i = 0; i < n; ++i) d[i] += s[i];
}
}  // namespace

void add_into(void* dst, const void* src, size_t n, DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return add_typed<float>(dst, src, n);
    case DType::kFloat64:
      return add_typed<double>(dst, src, n);
    case DType::kInt32:
      return add_typed<int32_t>(dst, src, n);
    case DType::kInt64:
      return add_typed<int64_t>(dst, src, n);
    case DType::kUInt8:
      return add_typed<uint8_t>(dst, src, n);
    default:
      JANUS_ASSERT(false, "dist: add_into: {} is not summable", dtype_name(dtype));
  }
}

void send_bytes(ProcessGroup::Impl& group, int peer, uint64_t slot, const void* data, size_t bytes,
                std::chrono::milliseconds timeout) {
  Transfers t(group);
  t.send(peer, slot, data, bytes);
  t.wait(timeout, nullptr);
}

void recv_bytes(ProcessGroup::Impl& group, int peer, uint64_t slot, void* data, size_t bytes,
                std::chrono::milliseconds timeout) {
  Transfers t(group);
  t.recv(peer, slot, data, bytes);
  t.wait(timeout, nullptr);
}

}  // namespace janus::dist::ps
