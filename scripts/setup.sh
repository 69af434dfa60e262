#!/usr/bin/env bash
# Installs what Parallax's build and tests need from Debian, if missing.
# Safe to run again: packages already present are not touched.
set -euo pipefail

packages=(build-essential pkg-config
    # OTF2 export/import (libotf2 through FFI) and its tests: otf2-print,
    # the python3-otf2 reader/writer; Perfetto and profile export tests:
    # protobuf decoding and pandas, all for Debian's /usr/bin/python3.
    libotf2-trace-dev otf2-tools python3-otf2 python3-protobuf python3-pandas python3-pip
    # The interposition library's MPI and OpenSHMEM wrappers (built against
    # mpi.h and shmem.h) and the tests that compile and run real C, C++,
    # Fortran, MPI and SHMEM programs: Open MPI with OSHMEM, gfortran, clang,
    # binutils' nm and objcopy (for the weak MPI symbols).
    openmpi-bin libopenmpi-dev gfortran clang binutils
    # The HTML report's tests open it in headless Chromium.
    chromium)

missing=()
for p in "${packages[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    echo "setup: installing ${missing[*]}" >&2
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
fi

# The Perfetto export tests decode traces with the descriptors of
# perfetto_trace.proto that the `perfetto` Python package ships (only its
# wheel is needed, not an installation).
deps="${PARALLAX_TEST_DEPS:-$HOME/.cache/parallax-test-deps}"
wheel="$deps/perfetto-0.59.1-py3-none-any.whl"
if [ ! -f "$wheel" ]; then
    mkdir -p "$deps"
    echo "setup: downloading the perfetto wheel (trace descriptors) into $deps" >&2
    /usr/bin/python3 -m pip download --quiet --no-deps --only-binary=:all: -d "$deps" perfetto==0.59.1
fi

if ! command -v cargo >/dev/null 2>&1; then
    echo "setup: cargo is missing; install Rust (https://rustup.rs) and run again" >&2
    exit 1
fi
