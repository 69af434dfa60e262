#!/usr/bin/env bash
# The whole test suite: installs what the tests need, then checks formatting
# and lints and runs every test of the workspace.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh

echo "== cargo fmt --check" >&2
cargo fmt --all -- --check
echo "== cargo clippy" >&2
cargo clippy --workspace --all-targets --quiet -- -D warnings
echo "== cargo build" >&2
# `cargo test` builds libraries as rlibs only; the interposition library
# (a cdylib that `parallax run` injects) must exist for the CLI tests.
cargo build --workspace
echo "== cargo test" >&2
cargo test --workspace
