#!/usr/bin/env bash
# onnx_venv.sh VENV: the virtual environment in which check_onnx.py runs, with the `onnx`
# package (its checker) and ONNX Runtime from PyPI (Debian packages neither). Idempotent: a
# venv that already imports them is left as it is, so only the first run needs PyPI.
set -euo pipefail
venv=$1
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "import onnx, onnxruntime, numpy" 2>/dev/null; then
  exit 0
fi
python=/usr/bin/python3
[ -x "$python" ] || python=python3
"$python" -m venv --clear "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check \
  "onnx>=1.14,<2" "onnxruntime>=1.16,<2" "numpy>=1.24"
"$venv/bin/python" -c "import onnx, onnxruntime; print('onnx_venv:', '$venv', 'onnx', onnx.__version__, 'onnxruntime', onnxruntime.__version__)"
