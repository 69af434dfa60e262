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
# The C/C++ header, the GASP headers and the Fortran module's sources; the module compiled
# with gfortran (parallax.mod) and its C side in libparallax_api.a.
for h in parallax.h parallax.f90 parallax_fortran.c gasp.h gasp_c.h gasp_upc.h; do
    install -m 0644 "crates/preload/include/$h" "$inc/$h"
done
build="$(mktemp -d)"
trap 'rm -rf "$build"' EXIT
cc -O2 -fPIC -I crates/preload/include -c crates/preload/include/parallax_fortran.c -o "$build/parallax_fortran.o"
objects=("$build/parallax_fortran.o")
if command -v gfortran >/dev/null 2>&1; then
    gfortran -O2 -fPIC -J "$build" -c crates/preload/include/parallax.f90 -o "$build/parallax_mod.o"
    install -m 0644 "$build/parallax.mod" "$inc/parallax.mod"
    objects+=("$build/parallax_mod.o")
fi
rm -f "$build/libparallax_api.a"
ar rcs "$build/libparallax_api.a" "${objects[@]}"
install -m 0644 "$build/libparallax_api.a" "$lib/libparallax_api.a"

echo "install: parallax installed in $bin (interposition library in $lib)" >&2
case ":$PATH:" in
*":$bin:"*) ;;
*) echo "install: $bin is not on your PATH; add it (e.g. export PATH=\"$bin:\$PATH\")" >&2 ;;
esac
"$bin/parallax" doctor --brief || true
