#!/usr/bin/python3
"""`make bench`: every Janus benchmark, then the same workloads in PyTorch, in one invocation.

Runs `janus bench --all --json` (each benchmark's figures stream to the terminal; its last line
is one JSON object) and bench/peers/peers.py (PyTorch eager and TorchScript, with as many
intra-op threads as a Janus kernel gets), then prints one table:

  workload | Janus | Janus hybridized | PyTorch eager | TorchScript | Janus/PyTorch | floor

where every figure is seconds for the whole workload, Janus/PyTorch is the best Janus mode over
the best PyTorch mode (below 1: Janus is faster), and the floor is what this machine's measured
sgemm peak (or copy bandwidth) allows, where one can be computed. Writes everything -- the
machine, each benchmark's JSON, the peers' JSON and the table -- to bench/results/latest.json.

  /usr/bin/python3 bench/report.py [--janus build/janus] [--quick] [--out FILE] [--no-peers]

--quick passes --quick to both sides (small workloads: a smoke test, figures not comparable).
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


def build_table(janus, peers):
    """Rows of (workload, janus_s, hybridized_s, eager_s, torchscript_s, floor_s, note)."""
    machine = janus.get("machine", {})
    peak = machine.get("sgemm_gflops")
    rows = []

    def row(name, peer_key, imperative, hybridized=None, floor=None):
        p = peers.get(peer_key, {})
        rows.append({"workload": name, "janus_s": imperative, "janus_hybridized_s": hybridized,
                     "torch_eager_s": p.get("eager_s"), "torchscript_s": p.get("torchscript_s"),
                     "floor_s": floor})

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
        floor = tl["epoch_s"] * tl["peak_fraction"] if tl.get("peak_fraction") else None
        row("seed training loop, epoch", "training_loop", tl["epoch_s"], floor=floor)
    for model in ("mlp", "lenet"):
        f = janus.get(f"fashion_{model}_epoch")
        if f:
            row(f"Fashion-MNIST {model} epoch", f"fashion_{model}_epoch", f["epoch_s"],
                f["hybridized_epoch_s"], f["floor_s"])
    for r in rows:
        mine = [v for v in (r["janus_s"], r["janus_hybridized_s"]) if v]
        theirs = [v for v in (r["torch_eager_s"], r["torchscript_s"]) if v]
        r["ratio"] = min(mine) / min(theirs) if mine and theirs else None
    return rows


def print_table(rows):
    head = ("workload", "Janus", "Janus hybr.", "PyTorch eager", "TorchScript",
            "Janus/PyTorch", "floor")
    widths = (32, 9, 11, 13, 11, 13, 8)
    line = " ".join(h.ljust(w) if i == 0 else h.rjust(w) for i, (h, w) in enumerate(zip(head, widths)))
    print(line)
    print("-" * len(line))
    for r in rows:
        cells = (r["workload"], fmt(r["janus_s"]), fmt(r["janus_hybridized_s"]),
                 fmt(r["torch_eager_s"]), fmt(r["torchscript_s"]),
                 "-" if r["ratio"] is None else f"{r['ratio']:.2f}", fmt(r["floor_s"]))
        print(" ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))))
    print("(seconds per workload; Janus/PyTorch = best Janus mode / best PyTorch mode, "
          "below 1 = Janus faster; floor from the measured sgemm peak or copy bandwidth)")


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

    peers, peer_info = {}, {}
    if not args.no_peers:
        threads = int(janus.get("machine", {}).get("threads", 1))
        peer_cmd = [sys.executable, os.path.join(ROOT, "bench", "peers", "peers.py"),
                    "--threads", str(threads)] + (["--quick"] if args.quick else [])
        peer_status, peer_objects = stream(peer_cmd)
        failed |= peer_status != 0
        for o in peer_objects:
            if "workload" in o:
                peers[o["workload"]] = o
            elif o.get("peer") == "pytorch":
                peer_info = o

    rows = build_table(janus, peers)
    print()
    print_table(rows)
    result = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "git": subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, text=True,
                              capture_output=True).stdout.strip(),
        "quick": args.quick,
        "machine": janus.get("machine", {}),
        "janus": janus,
        "peers": {"info": peer_info, "workloads": peers},
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
