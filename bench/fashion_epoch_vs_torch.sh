#!/usr/bin/env bash
# fashion_epoch_vs_torch: time per Fashion-MNIST training epoch, Janus against PyTorch, in one
# run. For each model (mlp, lenet) it trains EPOCHS epochs (default 1) with Janus imperative
# (build/bench/fashion_accuracy --epochs EPOCHS, the `janus train` loop), with Janus hybridized
# (the same with --hybridize: the compiled graph of the model) and then with PyTorch eager
# (bench/peers/fashion_epoch.py) on the same data, batch size, learning rate, momentum,
# initialisation and number of intra-op threads (PyTorch gets Janus' kernel threads, which
# fashion_accuracy reports). The hyperparameters are read from Janus' JSON line, so the runs
# always agree. Compares the last epoch's time of each and prints the ratios of each Janus mode
# to PyTorch (below 1: Janus is faster) and hybridized / imperative (below 1: hybridize pays),
# then one JSON line.
#
#   bench/fashion_epoch_vs_torch.sh                 # from the repository root, after make build
#   EPOCHS=2 BUILD=build bench/fashion_epoch_vs_torch.sh
#   LIMIT=12800 bench/fashion_epoch_vs_torch.sh    # the first 12800 training samples only
#
# PyTorch is Debian's python3-torch (scripts/install-deps.sh bench), so the interpreter is
# /usr/bin/python3 (not whatever python3 comes first on PATH); PYTHON overrides it.
set -euo pipefail

cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
EPOCHS=${EPOCHS:-1}
LIMIT=${LIMIT:-0}
PYTHON=${PYTHON:-/usr/bin/python3}
janus_bin="$BUILD/bench/fashion_accuracy"
peer=bench/peers/fashion_epoch.py

[ -x "$janus_bin" ] || { echo "fashion_epoch_vs_torch: $janus_bin is missing (make build)" >&2; exit 2; }
"$PYTHON" -c 'import torch' 2>/dev/null || {
  echo "fashion_epoch_vs_torch: $PYTHON cannot import torch (scripts/install-deps.sh bench)" >&2
  exit 2
}

# The value of "key" in a one-line JSON object.
field() { "$PYTHON" -c 'import json, sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"; }

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT

summary='{"bench": "fashion_epoch_vs_torch", "epochs": '"$EPOCHS"', "limit": '"$LIMIT"
ratio() { "$PYTHON" -c 'import sys; print(f"{float(sys.argv[1]) / float(sys.argv[2]):.3f}")' "$1" "$2"; }

for model in mlp lenet; do
  echo "== $model: Janus, imperative"
  "$janus_bin" --models "$model" --epochs "$EPOCHS" --limit "$LIMIT" | tee "$tmp"
  janus_json=$(grep '^{"bench": "fashion_accuracy"' "$tmp" | tail -n 1)
  threads=$(field "$janus_json" threads)
  batch=$(field "$janus_json" "${model}_batch_size")
  lr=$(field "$janus_json" "${model}_lr")
  momentum=$(field "$janus_json" "${model}_momentum")
  janus_s=$(field "$janus_json" "${model}_last_epoch_s")
  janus_acc=$(field "$janus_json" "${model}_test_acc")

  echo "== $model: Janus, hybridized"
  "$janus_bin" --models "$model" --epochs "$EPOCHS" --limit "$LIMIT" --hybridize | tee "$tmp"
  hybrid_json=$(grep '^{"bench": "fashion_accuracy"' "$tmp" | tail -n 1)
  hybrid_s=$(field "$hybrid_json" "${model}_last_epoch_s")
  hybrid_acc=$(field "$hybrid_json" "${model}_test_acc")

  echo "== $model: PyTorch ($threads threads)"
  "$PYTHON" "$peer" --model "$model" --epochs "$EPOCHS" --batch-size "$batch" --lr "$lr" \
    --momentum "$momentum" --threads "$threads" --limit "$LIMIT" | tee "$tmp"
  torch_json=$(grep '^{"bench": "fashion_epoch_torch"' "$tmp" | tail -n 1)
  torch_s=$(field "$torch_json" last_epoch_s)
  torch_acc=$(field "$torch_json" test_acc)
  torch_threads=$(field "$torch_json" threads)

  imperative_ratio=$(ratio "$janus_s" "$torch_s")
  hybrid_ratio=$(ratio "$hybrid_s" "$torch_s")
  speedup=$(ratio "$janus_s" "$hybrid_s")
  printf '%s: epoch %.3f s Janus imperative, %.3f s Janus hybridized, %.3f s PyTorch; ' \
    "$model" "$janus_s" "$hybrid_s" "$torch_s"
  printf 'Janus/PyTorch %s imperative, %s hybridized; hybridize speedup %sx ' \
    "$imperative_ratio" "$hybrid_ratio" "$speedup"
  printf '(test acc %.4f, %.4f vs %.4f)\n' "$janus_acc" "$hybrid_acc" "$torch_acc"
  summary+=", \"${model}_batch_size\": $batch, \"${model}_janus_epoch_s\": $janus_s"
  summary+=", \"${model}_janus_hybridized_epoch_s\": $hybrid_s"
  summary+=", \"${model}_torch_epoch_s\": $torch_s, \"${model}_ratio\": $imperative_ratio"
  summary+=", \"${model}_hybridized_ratio\": $hybrid_ratio"
  summary+=", \"${model}_hybridize_speedup\": $speedup"
  summary+=", \"${model}_janus_test_acc\": $janus_acc"
  summary+=", \"${model}_janus_hybridized_test_acc\": $hybrid_acc"
  summary+=", \"${model}_torch_test_acc\": $torch_acc"
done
summary+=", \"threads\": $threads, \"torch_threads\": $torch_threads}"
"$PYTHON" -c 'import json, sys; print(json.dumps(json.loads(sys.argv[1])))' "$summary"  # validates
