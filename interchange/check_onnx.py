#!/usr/bin/env python3
"""Checks Janus's ONNX export against the ONNX project's checker and ONNX Runtime.

Trains the two demo models for a few steps with `janus train --export`, has onnx_cases write
the other cases (exported models, a fixed input each and Janus's outputs for it, through the
deploy runtime), converts every model with `janus convert PREFIX --to onnx`, and for each:
onnx.checker.check_model (full check, with shape inference) passes, and ONNX Runtime's outputs
equal Janus's within 1e-5 (relative and absolute). Runs in the venv of onnx_venv.sh.
"""
import argparse
import pathlib
import shutil
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort

TOLERANCE = 1e-5


def run(*args):
    print("+", " ".join(str(a) for a in args), flush=True)
    subprocess.run([str(a) for a in args], check=True)


def check(work, name, outputs, inputs, shape, janus):
    prefix = work / name
    model_file = work / f"{name}.onnx"
    # One input: its shape given (what the graph records); several: the recorded shapes.
    shape_args = ["--shape", *shape] if len(inputs) == 1 else []
    run(janus, "convert", prefix, "--to", "onnx", model_file, "--inputs", ",".join(inputs),
        *shape_args)
    model = onnx.load(str(model_file))
    onnx.checker.check_model(model, full_check=True)
    session = ort.InferenceSession(str(model_file), providers=["CPUExecutionProvider"])
    feeds = {x: np.load(work / f"{name}.input{i}.npy") for i, x in enumerate(inputs)}
    if sorted(feeds) != sorted(i.name for i in session.get_inputs()):
        return f"{name}: the ONNX model's inputs are {[i.name for i in session.get_inputs()]}"
    got = session.run(None, feeds)
    if len(got) != outputs:
        return f"{name}: ONNX Runtime gave {len(got)} outputs, Janus {outputs}"
    problems = []
    for i, y in enumerate(got):
        want = np.load(work / f"{name}.expected{i}.npy")
        if y.shape != want.shape or y.dtype != want.dtype:
            problems.append(f"{name}: output {i} is {y.dtype}{list(y.shape)}, Janus gave "
                            f"{want.dtype}{list(want.shape)}")
        elif not np.allclose(y, want, rtol=TOLERANCE, atol=TOLERANCE):
            diff = np.abs(y.astype(np.float64) - want)
            problems.append(f"{name}: output {i} differs from Janus's by up to {diff.max():.3g} "
                            f"(at {np.unravel_index(diff.argmax(), diff.shape)})")
    ops = sorted({n.op_type for n in model.graph.node})
    print(f"{name}: {len(model.graph.node)} ONNX nodes ({', '.join(ops)}), "
          f"{'FAILED' if problems else 'equal within 1e-5'}", flush=True)
    return "\n".join(problems)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--janus", required=True, help="the janus program")
    parser.add_argument("--cases", required=True, help="the onnx_cases program")
    parser.add_argument("--work", required=True, help="a scratch folder (emptied first)")
    args = parser.parse_args()
    work = pathlib.Path(args.work)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    trained = []
    for model in ("mlp", "lenet"):
        prefix = work / f"{model}_trained"
        run(args.janus, "train", "--model", model, "--epochs", "1", "--limit", "256",
            "--batch-size", "64", "--hybridize", "--no-progress", "--export", prefix)
        trained.append(prefix)
    run(args.cases, work, *trained)
    problems = []
    for line in (work / "cases.txt").read_text().splitlines():
        name, outputs, inputs, *shape = line.split()
        problem = check(work, name, int(outputs), inputs.split(","), shape, args.janus)
        if problem:
            problems.append(problem)
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
