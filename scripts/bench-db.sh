#!/usr/bin/env bash
# What recording a run in the run database adds to `parallax demo` and to
# `parallax run` on the same workload (the imbalance example): ROUNDS runs
# each way, alternating, medians of the wall time.
#
#   scripts/bench-db.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-11}"
cargo build --release --quiet -p parallax-cli -p parallax-preload --bin parallax --example imbalance
px=target/release/parallax
app=target/release/examples/imbalance
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
db="$work/runs.sqlite"

now() { date +%s%N; }
# Runs "$@" and prints its wall time in ms.
timed() {
    local t0 t1
    t0=$(now)
    "$@" >/dev/null 2>"$work/stderr"
    t1=$(now)
    echo $(((t1 - t0) / 1000))
}
median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)] / 1000}'; }

bench() {
    local name="$1"; shift
    local off="$work/$name-off" on="$work/$name-on"
    : >"$off"; : >"$on"
    # One of each first: the database file is created and migrated once.
    "$@" --db "$db" >/dev/null 2>&1
    "$@" --no-db >/dev/null 2>&1
    : >"$work/$name-rec"
    for _ in $(seq "$rounds"); do
        timed "$@" --no-db >>"$off"
        timed "$@" --db "$db" >>"$on"
        # The time parallax itself reports for recording, in ms.
        sed -n 's/.*recorded as run .* (\([0-9]*\) ms).*/\1000/p' "$work/stderr" >>"$work/$name-rec"
    done
    local a b c
    a=$(median <"$off")
    b=$(median <"$on")
    c=$(median <"$work/$name-rec")
    awk -v n="$name" -v a="$a" -v b="$b" -v c="$c" -v r="$rounds" 'BEGIN {
        printf "%s, median of %d: without %.1f ms, with %.1f ms (%+.1f %%); recording itself %.0f ms (%.1f %%)\n",
            n, r, a, b, 100 * (b - a) / a, c, 100 * c / a }'
}

demo() { "$px" demo --out "$work/demo" "$@"; }
run() { "$px" run --out "$work/run" "$@" -- "$app" 4 60; }
bench "parallax demo" demo
bench "parallax run -- imbalance 4 60" run
