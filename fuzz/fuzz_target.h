// The libFuzzer entry point that every target in fuzz/ defines; replay_main.cc runs it on the
// files of its corpus (fuzz/corpus/<target>/) and seeded mutations of them in `make test`.
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
