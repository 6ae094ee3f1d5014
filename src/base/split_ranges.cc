// split_ranges: the row ranges of a batch split into parts.
#include "janus/base/split_ranges.h"

#include <algorithm>

#include "janus/base/error.h"

namespace janus {

std::vector<std::pair<int64_t, int64_t>> split_ranges(int64_t size, int64_t parts,
                                                      bool even_split) {
  JANUS_CHECK(parts >= 1, ValueError, "split: {} parts, expected at least 1", parts);
  JANUS_CHECK(size >= 0, ValueError, "split: size {} is negative", size);
  JANUS_CHECK(!even_split || size % parts == 0, ValueError,
              "split: a batch of {} rows does not split evenly into {} parts ({} rows left "
              "over); use a batch size divisible by {}, or even_split=false",
              size, parts, size % parts, parts);
  if (!even_split && size < parts) parts = std::max<int64_t>(size, 1);
  const int64_t base = size / parts, extra = size % parts;
  std::vector<std::pair<int64_t, int64_t>> out;
  int64_t begin = 0;
  for (int64_t i = 0; i < parts; ++i) {
    const int64_t end = begin + base + (i < extra ? 1 : 0);
    out.emplace_back(begin, end);
    begin = end;
  }
  return out;
}

}  // namespace janus
