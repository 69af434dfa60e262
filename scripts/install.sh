#!/usr/bin/env bash
# Installs Parallax: the Debian packages it uses (scripts/setup.sh), a
# release build of the whole workspace, and `parallax` with its
# interposition library and C/Fortran headers under a prefix.
#
#   scripts/install.sh                 # prefix /usr/local as root, else ~/.local
#   PREFIX=/opt/parallax scripts/install.sh
#
# Safe to run again: it rebuilds what changed and replaces the installed
# files (only those it installs).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${PREFIX:-}" ]; then
    if [ "$(id -u)" -eq 0 ]; then PREFIX=/usr/local; else PREFIX="$HOME/.local"; fi
fi

scripts/setup.sh

echo "install: building (release)" >&2
cargo build --release --workspace --locked

target="${CARGO_TARGET_DIR:-target}/release"
bin="$PREFIX/bin"
lib="$PREFIX/lib/parallax"
inc="$PREFIX/include/parallax"
mkdir -p "$bin" "$lib" "$inc"
# install(1) writes a new file and renames it: a running parallax keeps its
# old copy, and a symlink at the destination is replaced, not followed.
install -m 0755 "$target/parallax" "$bin/parallax"
install -m 0755 "$target/libparallax_preload.so" "$lib/libparallax_preload.so"
for h in crates/preload/include/*; do
    [ -e "$h" ] || continue
    install -m 0644 "$h" "$inc/$(basename "$h")"
done

echo "install: parallax installed in $bin (interposition library in $lib)" >&2
case ":$PATH:" in
*":$bin:"*) ;;
*) echo "install: $bin is not on your PATH; add it (e.g. export PATH=\"$bin:\$PATH\")" >&2 ;;
esac
"$bin/parallax" doctor --brief || true
