#!/usr/bin/env bash
# Installs Parallax into a scratch prefix as README.md's main command does,
# then measures a small MPI program with the installed `parallax` and
# exports it to OTF2: the installation is complete and works from the PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
scratch="$(mktemp -d "${TMPDIR:-/tmp}/parallax-install.XXXXXX")"
trap 'rm -rf "$scratch"' EXIT
PREFIX="$scratch/prefix" bash scripts/install.sh
export PATH="$scratch/prefix/bin:$PATH"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpicc -O1 -o "$scratch/p2p" workloads/mpi/p2p.c
(cd "$scratch" && parallax run --mode trace --out exp --no-db -- mpirun -np 2 ./p2p 3)
parallax report "$scratch/exp" --json | /usr/bin/python3 -c '
import json, sys
r = json.load(sys.stdin)
names = {row["region"] for row in r["total"]["flat"]}
assert any(n.startswith("MPI_") for n in names), names
'
parallax export "$scratch/exp" --format otf2 --out "$scratch/trace.otf2"
otf2-print "$scratch/trace.otf2" > "$scratch/trace.txt"
grep -q MPI_ "$scratch/trace.txt"
echo "install check: parallax from $scratch/prefix measured an MPI run and exported it to OTF2" >&2
