#!/usr/bin/env bash
# The whole test suite: installs what the tests need, then checks formatting
# and lints and runs every test of the workspace.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh

# The tests' files (experiments, compiled programs) go to a directory of
# this run: removed when everything passed, kept for a look otherwise.
TMPDIR="$(mktemp -d "${TMPDIR:-/tmp}/parallax-tests.XXXXXX")"
export TMPDIR
trap 'if [ $? -eq 0 ]; then rm -rf "$TMPDIR"; else echo "test files kept in $TMPDIR" >&2; fi' EXIT

echo "== cargo fmt --check" >&2
cargo fmt --all -- --check
echo "== cargo clippy" >&2
cargo clippy --workspace --all-targets --quiet -- -D warnings
echo "== cargo build" >&2
# `cargo test` builds libraries as rlibs only; the interposition library
# (a cdylib that `parallax run` injects) must exist for the CLI tests.
cargo build --workspace
echo "== cargo test" >&2
# Every test binary runs even when one fails, so that every failure shows.
cargo test --workspace --no-fail-fast
# The runtime's states and profiles, touched by their owner and by a
# thread that closes them at the same time, under Miri (which fails on any
# access between threads that is not synchronized).
echo "== cargo miri test (runtime concurrency)" >&2
MIRIFLAGS="-Zmiri-disable-isolation" CARGO_TARGET_DIR=target/miri \
    cargo +nightly miri test -q -p parallax --lib -- another_thread profile:: thread::tests
# The MPI executor, in a target directory of its own: the feature changes
# parallax-analysis and the parallax binary, which would otherwise be
# rebuilt back and forth with the default build.
echo "== cargo clippy, test --features mpi" >&2
CARGO_TARGET_DIR=target/mpi cargo clippy -p parallax-analysis -p parallax-cli --all-targets \
    --features parallax-cli/mpi --quiet -- -D warnings
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    CARGO_TARGET_DIR=target/mpi cargo test -p parallax-cli --features mpi --test mpi_executor --no-fail-fast
