// The row ranges that split a batch into parts, shared by split_and_load (parallel) and the
// DataLoader's per-device parts (data), so that both split alike. Layer: base.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace janus {

/// The row ranges [begin, end) along axis 0 that split `size` rows into `parts`: equal parts
/// when `even_split` (a size that `parts` does not divide is a ValueError naming both), else
/// the first size % parts parts get one row more. With fewer rows than parts (and not
/// even_split) there are only `size` parts, as in Gluon.
std::vector<std::pair<int64_t, int64_t>> split_ranges(int64_t size, int64_t parts,
                                                      bool even_split = true);

}  // namespace janus
