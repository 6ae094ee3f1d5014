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
# PyTorch for the side-by-side benchmarks. Debian's PyTorch calls the system BLAS
# (libblas.so.3) for matrix products; without an optimized one that is the netlib reference
# implementation, single-threaded and unblocked, which makes PyTorch's Linear layers many times
# slower than they are anywhere else. OpenBLAS (OpenMP build, so torch.set_num_threads also
# sets its threads) takes over libblas.so.3.
for group in "$@"; do
  case "$group" in
    bench) packages+=(python3-torch python3-numpy libopenblas0-openmp) ;;
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
[ ${#missing[@]} -eq 0 ] && exit 0

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
