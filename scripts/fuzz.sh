#!/usr/bin/env bash
# `make fuzz`: a coverage-guided libFuzzer campaign on each loader's fuzz target (fuzz/), built
# with clang, ASan and UBSan (the fuzz preset, build-fuzz/). Each target starts from its corpus
# in fuzz/corpus/<target>/ and writes what it discovers to build-fuzz/corpus/<target>/ (the
# committed corpus is only read); a crash is saved in build-fuzz/crashes/<target>/ and fails the
# run. Budget per target: FUZZ_SECONDS (default 60), or FUZZ_RUNS executions when set.
#   make fuzz                         # a minute each
#   FUZZ_RUNS=10000000 make fuzz      # a campaign of 10^7 executions each
#   FUZZ_TARGETS=npy make fuzz        # one target
set -euo pipefail
cd "$(dirname "$0")/.."
targets=${FUZZ_TARGETS:-graph_json safetensors idx npy mxnet_params mxnet_json}
budget=(-max_total_time="${FUZZ_SECONDS:-60}")
if [ -n "${FUZZ_RUNS:-}" ]; then budget=(-runs="$FUZZ_RUNS"); fi

cmake --preset fuzz >/dev/null
cmake --build build-fuzz -j "$(nproc)" --target $(printf '%s_fuzzer ' $targets)
for t in $targets; do
  mkdir -p "build-fuzz/corpus/$t" "build-fuzz/crashes/$t"
  dict=()
  if [ -f "fuzz/$t.dict" ]; then dict=(-dict="fuzz/$t.dict"); fi
  echo "fuzz: $t (${budget[*]})"
  # Leak checks stay on; -rss_limit_mb bounds what one input may make a loader allocate.
  if ! "build-fuzz/fuzz/${t}_fuzzer" "${budget[@]}" "${dict[@]}" -rss_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix="build-fuzz/crashes/$t/" \
      "build-fuzz/corpus/$t" "fuzz/corpus/$t" >"build-fuzz/$t.log" 2>&1; then
    tail -n 40 "build-fuzz/$t.log"
    if [ -z "$(ls -A "build-fuzz/crashes/$t")" ]; then
      echo "fuzz: $t stopped without a crash (interrupted?)" >&2
    else
      echo "fuzz: $t found a crash: build-fuzz/crashes/$t/ (replay: build-fuzz/fuzz/${t}_fuzzer FILE)" >&2
    fi
    exit 1
  fi
  grep -E '^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' "build-fuzz/$t.log" |
    sed "s/^/fuzz: $t /"
done
