#!/usr/bin/env python3
"""Checks Janus's ONNX export against the ONNX project's checker and ONNX Runtime.

Trains the two demo models for a few steps with `janus train --export`, has onnx_cases write
the other cases (exported models, a fixed input each and Janus's outputs for it, through the
deploy runtime), converts every model with `janus convert PREFIX --to onnx`, and for each:
onnx.checker.check_model (full check, with shape inference) passes, and ONNX Runtime's outputs
equal Janus's within 1e-5 (relative and absolute). The Apache MXNet 1.9.1 fixtures
(tests/fixtures/mxnet/, both flavours) are converted from MXNet's files the same way, and ONNX
Runtime's outputs for their saved input equal both MXNet's saved outputs and Janus's (`janus
run --output`). Runs in the venv of onnx_venv.sh.
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


def compare(name, got, references):
    """Problems of ONNX Runtime's outputs `got` against each {source: [arrays]} reference."""
    problems = []
    for source, wanted in references.items():
        if len(got) != len(wanted):
            problems.append(f"{name}: ONNX Runtime gave {len(got)} outputs, {source} {len(wanted)}")
            continue
        for i, (y, want) in enumerate(zip(got, wanted)):
            if y.shape != want.shape or y.dtype != want.dtype:
                problems.append(f"{name}: output {i} is {y.dtype}{list(y.shape)}, {source} gave "
                                f"{want.dtype}{list(want.shape)}")
            elif not np.allclose(y, want, rtol=TOLERANCE, atol=TOLERANCE):
                diff = np.abs(y.astype(np.float64) - want)
                at = np.unravel_index(diff.argmax(), diff.shape)
                problems.append(f"{name}: output {i} differs from {source}'s by up to "
                                f"{diff.max():.3g} (at {at})")
    return problems


def check(janus, prefix, model_file, feeds, references):
    """Converts PREFIX to ONNX (its one input's shape given), checks the file and compares ONNX
    Runtime's outputs for `feeds` with `references`; returns the problems found."""
    name = model_file.stem
    # One input: its shape given (what the graph records); several: the recorded shapes.
    shape_args = ["--shape", *next(iter(feeds.values())).shape] if len(feeds) == 1 else []
    run(janus, "convert", prefix, "--to", "onnx", model_file, "--inputs", ",".join(feeds),
        *shape_args)
    model = onnx.load(str(model_file))
    onnx.checker.check_model(model, full_check=True)
    session = ort.InferenceSession(str(model_file), providers=["CPUExecutionProvider"])
    if sorted(feeds) != sorted(i.name for i in session.get_inputs()):
        return [f"{name}: the ONNX model's inputs are {[i.name for i in session.get_inputs()]}"]
    problems = compare(name, session.run(None, feeds), references)
    ops = sorted({n.op_type for n in model.graph.node})
    print(f"{name}: {len(model.graph.node)} ONNX nodes ({', '.join(ops)}), "
          f"{'FAILED' if problems else 'equal within 1e-5 to ' + ' and '.join(references)}",
          flush=True)
    return problems


def numbered(stem, count=None):
    """STEM0.npy, STEM1.npy, ... (`count` of them, or as many as there are)."""
    arrays = []
    while count is None or len(arrays) < count:
        path = pathlib.Path(f"{stem}{len(arrays)}.npy")
        if count is None and not path.exists():
            break
        arrays.append(np.load(path))
    return arrays


def check_fixture(work, fixture, janus):
    """An MXNet fixture: ONNX Runtime against MXNet's saved outputs and Janus's."""
    name = f"mxnet_{fixture.parent.name}_{fixture.name}"
    x = np.load(f"{fixture}-input.npy")
    mxnet = numbered(f"{fixture}-output")
    out = work / f"{name}.janus.npy"
    run(janus, "run", fixture, "--input", f"{fixture}-input.npy", "--repeat", "0", "--output", out)
    janus_outputs = [np.load(out)] if len(mxnet) == 1 else numbered(work / f"{name}.janus-",
                                                                     len(mxnet))
    return check(janus, fixture, work / f"{name}.onnx", {"data": x},
                 {"MXNet 1.9.1": mxnet, "Janus": janus_outputs})


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--janus", required=True, help="the janus program")
    parser.add_argument("--cases", required=True, help="the onnx_cases program")
    parser.add_argument("--work", required=True, help="a scratch folder (emptied first)")
    parser.add_argument("--fixtures", required=True,
                        help="the MXNet fixtures' folder (tests/fixtures/mxnet)")
    args = parser.parse_args()
    work = pathlib.Path(args.work)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    trained = []
    for model in ("mlp", "lenet"):
        prefix = work / f"{model}_trained"
        run(args.janus, "train", "--model", model, "--epochs", "1", "--limit", "256",
            "--batch-size", "64", "--hybridize", "--no-progress", "--export", prefix)
        trained.append(f"{prefix}-0001.safetensors")  # the epoch trained
    run(args.cases, work, *trained)
    problems = []
    for line in (work / "cases.txt").read_text().splitlines():
        name, outputs, inputs = line.split()
        feeds = {x: np.load(work / f"{name}.input{i}.npy")
                 for i, x in enumerate(inputs.split(","))}
        problems += check(args.janus, work / name, work / f"{name}.onnx", feeds,
                          {"Janus": numbered(work / f"{name}.expected", int(outputs))})
    fixtures = sorted(pathlib.Path(args.fixtures).glob("*/*-symbol.json"))
    if not fixtures:
        problems.append(f"no MXNet fixtures (*/*-symbol.json) in {args.fixtures}")
    for symbol_file in fixtures:
        prefix = symbol_file.with_name(symbol_file.name[:-len("-symbol.json")])
        problems += check_fixture(work, prefix, args.janus)
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
