#!/usr/bin/env bash
# Installs the Debian packages that building, testing and running Janus need. Idempotent: does
# nothing when everything is present. Uses sudo when not root.
set -euo pipefail

# ocl-icd-opencl-dev: Debian's oneDNN CMake config (dnnl-config.cmake) calls find_package(OpenCL)
# and fails without it, but libdnnl-dev only Recommends it, which --no-install-recommends drops.
# clang-format: make test checks the formatting.
# ccache: rebuilds on a machine that keeps its cache (CI's clean clones) reuse earlier objects.
# python3-dev, pybind11-dev, python3-pybind11: the Python package janus (python/) is a pybind11
# extension module built by the same CMake; python3-numpy and python3-pytest run its tests
# (make test) with the system python3; python3-venv gives the pip round trip (make test-pip)
# a fresh venv.
# libgloo-dev: the dist layer's collectives (allreduce, broadcast, allgather, barrier over TCP)
# run on Gloo rather than on a transport of our own (DESIGN.md, "Distribution").
# libonnx-dev, libprotobuf-dev: ONNX export (interchange/) writes models through the ONNX
# project's own protobuf classes (onnx/onnx_pb.h, CMake package ONNX) and links protobuf.
# libopenmpi-dev, openmpi-bin: the optional MPI backend (JANUS_DIST_BACKEND=mpi) and mpirun,
# which its tests start their ranks with.
packages=(
  build-essential cmake ninja-build pkg-config ccache clang-format
  libdnnl-dev ocl-icd-opencl-dev libfmt-dev nlohmann-json3-dev libcli11-dev zlib1g-dev
  libgtest-dev libgmock-dev libbenchmark-dev libgloo-dev libonnx-dev libprotobuf-dev
  libopenmpi-dev openmpi-bin
  python3-dev pybind11-dev python3-pybind11 python3-numpy python3-pytest python3-venv
  dataset-fashion-mnist
)
# Extra groups: `fuzz` adds clang for `make fuzz`, `tidy` clang-tidy for `make tidy`, and `bench`
# the peers of the side-by-side benchmarks. PyTorch is Debian's. Debian's PyTorch calls the
# system BLAS (libblas.so.3) for matrix products; without an optimized one that is the netlib
# reference implementation, single-threaded and unblocked, which makes PyTorch's Linear layers
# many times slower than they are anywhere else. OpenBLAS (OpenMP build, so
# torch.set_num_threads also sets its threads) takes over libblas.so.3. Apache MXNet 1.9.1 (the
# seed's own system) is not packaged by Debian: `bench` also makes a venv, build/bench-venv, with
# mxnet==1.9.1 from PyPI and numpy<1.24 (mxnet 1.9.1 still uses np.bool, which numpy 1.24
# removed). Its wheel (py3-none-manylinux2014) brings its own OpenBLAS and libgfortran.so.3 but
# links the system's libquadmath.so.0 and libgomp.so.1. The venv is optional: when it cannot be
# made (no network, PyPI down) this script says so loudly and goes on, and `make bench` prints
# the MXNet column as unavailable with the reason (bench/report.py).
bench_venv=""
for group in "$@"; do
  case "$group" in
    bench)
      packages+=(python3-torch python3-numpy libopenblas0-openmp python3-venv libquadmath0 libgomp1)
      bench_venv="$(cd "$(dirname "$0")/.." && pwd)/build/bench-venv"
      ;;
    # libFuzzer builds (make fuzz): clang 16, whose C++20 library support has
    # std::source_location, with its sanitizer runtimes and OpenMP.
    fuzz) packages+=(clang-16 libclang-rt-16-dev libomp-16-dev) ;;
    tidy) packages+=(clang-tidy) ;;
    *) echo "install-deps: unknown group '$group' (known: bench, fuzz, tidy)" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  echo "install-deps: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The MXNet venv of the `bench` group (see above). Idempotent: nothing to do when its python
# already imports mxnet 1.9.1.
mxnet_check='import mxnet, numpy; assert mxnet.__version__ == "1.9.1", mxnet.__version__; mxnet.nd.ones((2, 2)).asnumpy()'
if [ -n "$bench_venv" ] && ! "$bench_venv/bin/python" -c "$mxnet_check" >/dev/null 2>&1; then
  echo "install-deps: making $bench_venv (mxnet==1.9.1, numpy<1.24 from PyPI)"
  if ! { python3 -m venv "$bench_venv" &&
    "$bench_venv/bin/python" -m pip install -q --disable-pip-version-check "mxnet==1.9.1" "numpy<1.24" &&
    "$bench_venv/bin/python" -c "$mxnet_check"; }; then
    echo "install-deps: WARNING: could not make the MXNet 1.9.1 venv $bench_venv (see above);" \
      "make bench will run without the MXNet column and say so" >&2
  fi
fi
