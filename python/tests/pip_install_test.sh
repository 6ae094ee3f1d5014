#!/usr/bin/env bash
# `pip install .` into a fresh venv, then a tiny program with the installed package (ctest
# python.pip_install, label python-pip; not in the default run: pip builds the whole C++ library
# again in build-pip/ (tens of minutes on 2 cores the first time, incremental later), and fetches
# scikit-build-core and pybind11 from PyPI). Usage: pip_install_test.sh <source dir> <scratch dir>
set -euo pipefail
src=$1
work=$2
rm -rf "$work"
mkdir -p "$work"
/usr/bin/python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q "$src"
cd "$work"  # not the source tree: the installed package must be what imports
"$work/venv/bin/python" - <<'PY'
import janus as mx
from janus import np, npx, autograd, gluon, init
print("janus from", mx.__file__)
x = np.arange(4.0)
x.attach_grad()
with autograd.record():
    y = 2 * np.dot(x, x)
y.backward()
assert x.grad.asnumpy().tolist() == [0.0, 4.0, 8.0, 12.0], x.grad
net = gluon.nn.Dense(2)
net.initialize(init.One())
print(net(np.ones((1, 3))))
npx.waitall()
print("pip install: ok")
PY
