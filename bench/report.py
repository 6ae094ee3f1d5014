#!/usr/bin/python3
"""`make bench`: every Janus benchmark, then the same workloads in its peers, in one invocation.

Runs `janus bench --all --json` (each benchmark's figures stream to the terminal; its last line
is one JSON object), bench/peers/peers.py (PyTorch eager and TorchScript, Debian's torch) and
bench/peers/mxnet_peers.py (Apache MXNet 1.9.1, the seed's own system, imperative, hybridized
and hybridized with static_alloc and static_shape, in the venv build/bench-venv that
`scripts/install-deps.sh bench` makes), each peer with as many intra-op threads as a Janus
kernel gets, then prints one table:

  workload | Janus | Janus hybr. | PyTorch eager | TorchScript | MXNet | MXNet hybr. |
           MXNet static | Janus/best peer | floor

where every figure is seconds for the whole workload, Janus/best peer is the best Janus mode
over the fastest peer column (below 1: Janus is faster; the column named beside it), and the
floor is the physical lower bound the Janus bench computes (each bench says which resource
binds). When the MXNet venv is missing or does not import mxnet 1.9.1, its columns read "n/a"
and the table says why (never a silently missing column). Writes everything -- the machine,
each benchmark's JSON, the peers' JSON and the table -- to bench/results/latest.json.

  /usr/bin/python3 bench/report.py [--janus build/janus] [--quick] [--out FILE] [--no-peers]

--quick passes --quick to every side (small workloads: a smoke test, figures not comparable).
"""
import argparse
import datetime
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def stream(cmd):
    """Runs cmd, echoing its output; returns (exit status, the JSON objects among its lines)."""
    print("$ " + " ".join(cmd), flush=True)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, cwd=ROOT)
    objects = []
    for line in proc.stdout:
        sys.stdout.write(line)
        sys.stdout.flush()
        text = line.strip()
        if text.startswith("{"):
            try:
                objects.append(json.loads(text))
            except json.JSONDecodeError:
                pass
    return proc.wait(), objects


def fmt(v):
    if v is None:
        return "-"
    if v >= 100:
        return f"{v:.0f}"
    if v >= 1:
        return f"{v:.2f}"
    return f"{v:.4f}"


# The peers' columns: (column heading, peer, the key of its figure in the peer's JSON line).
PEER_COLUMNS = (
    ("PyTorch eager", "pytorch", "eager_s"),
    ("TorchScript", "pytorch", "torchscript_s"),
    ("MXNet", "mxnet", "imperative_s"),
    ("MXNet hybr.", "mxnet", "hybridized_s"),
    ("MXNet static", "mxnet", "static_s"),
)


def build_table(janus, peers):
    """Rows of {workload, janus_s, janus_hybridized_s, peers: {column: s}, best_peer, ratio,
    floor_s}; peers is {peer: {workload: JSON line}}."""
    machine = janus.get("machine", {})
    peak = machine.get("compute_peak_gflops")  # the floors' peak (bench/machine.h)
    rows = []

    def row(name, peer_key, imperative, hybridized=None, floor=None):
        cols = {col: peers.get(peer, {}).get(peer_key, {}).get(key)
                for col, peer, key in PEER_COLUMNS}
        rows.append({"workload": name, "janus_s": imperative, "janus_hybridized_s": hybridized,
                     "peers": cols, "floor_s": floor})

    h = janus.get("hybridize_mlp")
    if h:
        row("seed MLP 1x512 forward x 1000", "mlp_forward_1000", h["imperative_us"] * 1e-3,
            h["hybridized_us"] * 1e-3, h["floor_us"] * 1e-3)
    t = janus.get("tiny_op")
    if t:
        row("tiny operator x 100,000", "tiny_op_100k", t["total_s"])
    m = janus.get("matmul_vs_onednn")
    if m and "dot_1000_us" in m:
        row("matmul 1000^3 x 10", "matmul_1000_x10", m["dot_1000_us"] * 1e-5,
            floor=10 * 2e9 / (peak * 1e9) if peak else None)
    tl = janus.get("training_loop")
    if tl:
        floor = tl.get("floor_s") or (tl["epoch_s"] * tl["peak_fraction"]
                                       if tl.get("peak_fraction") else None)
        row("seed training loop, epoch", "training_loop", tl["epoch_s"], floor=floor)
    for model in ("mlp", "lenet"):
        f = janus.get(f"fashion_{model}_epoch")
        if f:
            row(f"Fashion-MNIST {model} epoch", f"fashion_{model}_epoch", f["epoch_s"],
                f["hybridized_epoch_s"], f["floor_s"])
    for r in rows:
        mine = [v for v in (r["janus_s"], r["janus_hybridized_s"]) if v]
        theirs = [(v, col) for col, v in r["peers"].items() if v]
        best = min(theirs) if theirs else None
        r["best_peer"] = best[1] if best else None
        r["ratio"] = min(mine) / best[0] if mine and best else None
    return rows


def print_table(rows, missing):
    """missing: {peer: reason} for each peer whose columns could not be measured."""
    head = ("workload", "Janus", "Janus hybr.") + tuple(c for c, _, _ in PEER_COLUMNS) + (
        "Janus/best peer", "floor")
    widths = (30, 8, 11, 13, 11, 8, 11, 12, 26, 8)
    line = " ".join(h.ljust(w) if i == 0 else h.rjust(w) for i, (h, w) in enumerate(zip(head, widths)))
    print(line)
    print("-" * len(line))
    unavailable = {col for col, peer, _ in PEER_COLUMNS if peer in missing}
    for r in rows:
        peer_cells = tuple("n/a" if col in unavailable else fmt(r["peers"][col])
                           for col, _, _ in PEER_COLUMNS)
        ratio = "-" if r["ratio"] is None else f"{r['ratio']:.2f} ({r['best_peer']})"
        cells = (r["workload"], fmt(r["janus_s"]), fmt(r["janus_hybridized_s"])) + peer_cells + (
            ratio, fmt(r["floor_s"]))
        print(" ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))))
    print("(seconds per workload; Janus/best peer = best Janus mode / fastest peer column, below 1 ="
          " Janus faster; MXNet static = hybridize(static_alloc, static_shape); floor from the"
          " measured sgemm peak, cache or copy bandwidth, each bench says which)")
    for peer, reason in missing.items():
        print(f"!! {peer} columns n/a: {reason}")


def mxnet_python():
    """The MXNet venv's interpreter, or (None, why not)."""
    python = os.path.join(ROOT, "build", "bench-venv", "bin", "python")
    if not os.access(python, os.X_OK):
        return None, (f"{os.path.relpath(python, ROOT)} is missing "
                      "(scripts/install-deps.sh bench makes it; it needs PyPI)")
    check = subprocess.run([python, "-c", "import mxnet; print(mxnet.__version__)"],
                           capture_output=True, text=True)
    if check.returncode != 0 or check.stdout.strip() != "1.9.1":
        why = (check.stderr.strip().splitlines() or [check.stdout.strip()])[-1]
        return None, f"{os.path.relpath(python, ROOT)} does not import mxnet 1.9.1: {why}"
    return python, None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--janus", default=os.path.join(ROOT, "build", "janus"))
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--no-peers", action="store_true", help="Janus only")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "latest.json"))
    args = ap.parse_args()
    if not os.access(args.janus, os.X_OK):
        sys.exit(f"bench/report.py: {args.janus} is missing (make build)")

    cmd = [args.janus, "bench", "--all", "--json"] + (["--quick"] if args.quick else [])
    status, objects = stream(cmd)
    janus = {o["bench"]: o for o in objects if "bench" in o}
    failed = status != 0

    peers, peer_info, missing = {}, {}, {}
    if not args.no_peers:
        threads = int(janus.get("machine", {}).get("threads", 1))
        peer_args = ["--threads", str(threads)] + (["--quick"] if args.quick else [])
        runs = [("pytorch", sys.executable, "peers.py")]
        python, why = mxnet_python()
        if python:
            runs.append(("mxnet", python, "mxnet_peers.py"))
        else:
            missing["mxnet"] = why
            print(f"bench/report.py: WARNING: no MXNet 1.9.1 columns: {why}", flush=True)
        for peer, python, script in runs:
            peer_status, peer_objects = stream(
                [python, os.path.join(ROOT, "bench", "peers", script)] + peer_args)
            failed |= peer_status != 0
            peers[peer] = {}
            for o in peer_objects:
                if "workload" in o:
                    peers[peer][o["workload"]] = o
                else:
                    peer_info[peer] = o
            if not peers[peer]:  # crashed before its JSON lines: the columns say so
                missing[peer] = f"{script} exited with status {peer_status} (see above)"
    rows = build_table(janus, peers)
    print()
    print_table(rows, missing)
    result = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "git": subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, text=True,
                              capture_output=True).stdout.strip(),
        "quick": args.quick,
        "machine": janus.get("machine", {}),
        "janus": janus,
        "peers": {"info": peer_info, "workloads": peers, "missing": missing},
        "table": rows,
    }
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    print(f"wrote {os.path.relpath(args.out, ROOT)}")
    if failed:
        sys.exit("bench/report.py: a benchmark failed (see above)")


if __name__ == "__main__":
    main()
