#!/usr/bin/env python3
"""Checks Janus's ONNX export against the ONNX project's checker and ONNX Runtime.

Trains the two demo models for a few steps with `janus train --export`, has onnx_cases write
the other cases (exported models, a fixed input each and Janus's outputs for it, through the
deploy runtime), converts every model with `janus convert PREFIX --to onnx`, and for each:
onnx.checker.check_model (full check, with shape inference) passes, and ONNX Runtime's outputs
equal Janus's within 1e-5 (relative and absolute). The Apache MXNet 1.9.1 fixtures
(tests/fixtures/mxnet/, both flavours) are converted from MXNet's files the same way, and ONNX
Runtime's outputs for their saved input equal both MXNet's saved outputs and Janus's (`janus
run --output`). Models whose graphs hold at any batch size (the demo models, two_in_two_out,
the MXNet fixtures but symops, shapeops, arrayops, nparrayops, rnns and seqops) are exported with a symbolic
batch (axis 0 of every input is `batch`) and run by ONNX Runtime at two batch sizes; the others
are exported with --fixed-batch, and converting them without it must fail naming a node. The
MXNet fixtures orderops, mathops and npmathops hold an operator that ONNX export refuses:
converting them must fail naming the node.
Runs in the venv of onnx_venv.sh.
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


def refused_dynamic(janus, prefix, model_file, args):
    """Problems unless converting PREFIX with a dynamic batch fails with an error naming what
    fixes the batch: a node, or inputs whose axes 0 differ (an RNN's states beside its data)."""
    result = subprocess.run([str(a) for a in (janus, "convert", prefix, "--to", "onnx",
                                              model_file.with_suffix(".dynamic.onnx"), *args)],
                            capture_output=True, text=True)
    if result.returncode == 0 or ("node '" not in result.stderr and
                                  "inputs '" not in result.stderr):
        return [f"{model_file.stem}: a dynamic batch was not refused naming a node or inputs "
                f"(exit {result.returncode}): {result.stderr.strip()}"]
    print(f"{model_file.stem}: dynamic batch refused: {result.stderr.strip()}", flush=True)
    return []


def check(janus, prefix, model_file, feeds, references, batches=None):
    """Converts PREFIX to ONNX (its one input's shape given), checks the file and compares ONNX
    Runtime's outputs for `feeds` with `references`; returns the problems found. `batches`: the
    model holds at any batch size and is exported with a symbolic batch; (feeds, references) at
    another batch size to run as well. None: exported with --fixed-batch, after checking that a
    dynamic batch is refused."""
    name = model_file.stem
    # One input: its shape given (what the graph records); several: the recorded shapes.
    shape_args = ["--shape", *next(iter(feeds.values())).shape] if len(feeds) == 1 else []
    args = ["--inputs", ",".join(feeds), *shape_args]
    problems = []
    if batches is None:
        problems += refused_dynamic(janus, prefix, model_file, args)
        args.append("--fixed-batch")
    run(janus, "convert", prefix, "--to", "onnx", model_file, *args)
    model = onnx.load(str(model_file))
    onnx.checker.check_model(model, full_check=True)
    axis0 = [i.type.tensor_type.shape.dim[0] for i in model.graph.input]
    if any(d.dim_param != ("batch" if batches else "") for d in axis0):
        problems.append(f"{name}: the inputs' axis 0 is {[str(d).strip() for d in axis0]}")
    session = ort.InferenceSession(str(model_file), providers=["CPUExecutionProvider"])
    if sorted(feeds) != sorted(i.name for i in session.get_inputs()):
        return [f"{name}: the ONNX model's inputs are {[i.name for i in session.get_inputs()]}"]
    runs = [(feeds, references)] + ([batches] if batches else [])
    for run_feeds, run_references in runs:
        rows = next(iter(run_feeds.values())).shape[0]
        problems += compare(f"{name} (batch {rows})", session.run(None, run_feeds), run_references)
    ops = sorted({n.op_type for n in model.graph.node})
    sizes = " and ".join(str(next(iter(f.values())).shape[0]) for f, _ in runs)
    print(f"{name}: {len(model.graph.node)} ONNX nodes ({', '.join(ops)}), "
          f"{'FAILED' if problems else 'equal within 1e-5 to ' + ' and '.join(references)}"
          f" at batch {sizes}", flush=True)
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


# The fixtures whose graphs fix the batch size (symops splits axis 0 with Reshape code -4 and a
# literal 2; shapeops's where chooses rows by a condition of extent 2; arrayops broadcasts axis
# 0 to 2 and, as nparrayops, reverses axis 0 by ordering it; rnns's axis 0 is the sequence,
# which its last Dense flattens with the features; seqops's axis 0 is the time, and its lengths,
# a parameter, fix the batch).
FIXED_BATCH_FIXTURES = {"symops", "shapeops", "arrayops", "nparrayops", "rnns", "seqops"}
# The fixtures that hold an operator that ONNX export refuses, and what the refusal must say
# (orderops: topk's mask; mathops and npmathops: hypot and arctan2, which ONNX lacks).
REFUSED_FIXTURES = {"orderops": "node 'topk_mask' (operator 'topk'): ret_typ 'mask'",
                    "mathops": "node 'b_hypot' (operator 'hypot')",
                    "npmathops": "node 'numpymathops0_arctan20' (operator 'arctan2')"}


def janus_run(janus, fixture, input_file, out, count):
    """Janus's outputs (`janus run --output`) for the .npy input_file."""
    run(janus, "run", fixture, "--input", input_file, "--repeat", "0", "--output", out)
    return [np.load(out)] if count == 1 else numbered(str(out)[:-len(".npy")] + "-", count)


def check_fixture(work, fixture, janus):
    """An MXNet fixture: ONNX Runtime against MXNet's saved outputs and Janus's; with a dynamic
    batch, also for the input repeated 3 times along axis 0, against MXNet's outputs repeated
    likewise (every fixture computes each row on its own) and Janus's."""
    name = f"mxnet_{fixture.parent.name}_{fixture.name}"
    x = np.load(f"{fixture}-input.npy")
    if fixture.name in REFUSED_FIXTURES:
        result = subprocess.run([janus, "convert", fixture, "--to", "onnx", work / f"{name}.onnx",
                                 "--fixed-batch", "--shape", *map(str, x.shape)],
                                capture_output=True, text=True, check=False)
        if result.returncode == 0 or REFUSED_FIXTURES[fixture.name] not in result.stderr:
            return [f"{name}: expected a refusal naming {REFUSED_FIXTURES[fixture.name]!r} "
                    f"(exit {result.returncode}): {result.stderr.strip()}"]
        print(f"{name}: refused: {result.stderr.strip()}", flush=True)
        return []
    mxnet = numbered(f"{fixture}-output")
    janus_outputs = janus_run(janus, fixture, f"{fixture}-input.npy", work / f"{name}.janus.npy",
                              len(mxnet))
    batches = None
    if fixture.name not in FIXED_BATCH_FIXTURES:
        x3 = np.concatenate([x] * 3)
        np.save(work / f"{name}.input3.npy", x3)
        janus3 = janus_run(janus, fixture, work / f"{name}.input3.npy",
                           work / f"{name}.janus3.npy", len(mxnet))
        batches = ({"data": x3}, {"MXNet 1.9.1": [np.concatenate([y] * 3) for y in mxnet],
                                  "Janus": janus3})
    return check(janus, fixture, work / f"{name}.onnx", {"data": x},
                 {"MXNet 1.9.1": mxnet, "Janus": janus_outputs}, batches)


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
        name, outputs, inputs, batch = line.split()
        names = inputs.split(",")

        def case(kind):
            feeds = {x: np.load(work / f"{name}.{kind}input{i}.npy") for i, x in enumerate(names)}
            return feeds, {"Janus": numbered(work / f"{name}.{kind}expected", int(outputs))}

        feeds, references = case("")
        problems += check(args.janus, work / name, work / f"{name}.onnx", feeds, references,
                          case("batch_") if batch == "dynamic" else None)
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
