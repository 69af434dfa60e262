#!/usr/bin/env bash
# Installs what Parallax's build and tests need from Debian, if missing.
# Safe to run again: packages already present are not touched.
set -euo pipefail

packages=(build-essential pkg-config)

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

if ! command -v cargo >/dev/null 2>&1; then
    echo "setup: cargo is missing; install Rust (https://rustup.rs) and run again" >&2
    exit 1
fi
