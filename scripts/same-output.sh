#!/usr/bin/env bash
# Checks that this checkout's parallax gives byte for byte the outputs of
# a reference revision's: `analyze --json`, `report --json`, `compensate`
# (the whole experiment it writes, and its report) and every export
# format, and the import of this checkout's OTF2 archives, on the same
# inputs: the ground-truth programs of workloads/bottlenecks and the demo
# (measured once, by this checkout), and a synthetic experiment of 64
# locations.
#
#   scripts/same-output.sh            # against the revision in .ci/output-base
#   scripts/same-output.sh REV        # against REV
#   KEEP=DIR scripts/same-output.sh   # keep inputs and outputs in DIR (and
#                                     # reuse the inputs measured there)
#
# A change that alters outputs on purpose moves .ci/output-base to the
# commit that made it. Exit status 1 lists the outputs that differ.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
base=${1:-$(tr -d '[:space:]' < .ci/output-base)}
git rev-parse --verify --quiet "$base^{commit}" >/dev/null \
    || { echo "same-output: no revision $base in this clone" >&2; exit 2; }

work=${KEEP:-$(mktemp -d -t parallax-same-output.XXXXXX)}
mkdir -p "$work"
if [ -z "${KEEP:-}" ]; then
    trap 'git -C "$root" worktree remove --force "$work/base-src" 2>/dev/null || true; rm -rf "$work"' EXIT
fi

echo "same-output: building this checkout and $base" >&2
cargo build --quiet --release --bin parallax --bin parallax-bench
cargo build --quiet --release -p parallax-preload
new=$root/target/release/parallax
if [ -d "$work/base-src" ]; then
    git -C "$work/base-src" checkout --quiet --detach "$base"
else
    git worktree add --quiet --detach "$work/base-src" "$base"
fi
# The reference build keeps its own target directory: its outputs must
# come from its own code only.
(cd "$work/base-src" && CARGO_TARGET_DIR="$work/base-target" \
    cargo build --quiet --release --bin parallax)
old=$work/base-target/release/parallax

in=$work/in
if [ ! -f "$in/complete" ]; then
    echo "same-output: measuring the inputs" >&2
    rm -rf "$in"
    mkdir -p "$in"
    {
        "$new" demo --out "$in/demo" --json
        "$new" demo --out "$in/demo-profile" --mode profile --json
        target/release/parallax-bench detection --keep "$in/gt"
        target/release/parallax-bench detection --scale 200000 --ranks 64 \
            --dir "$in/synthetic64"
    } >"$work/measure.log" 2>&1 || { cat "$work/measure.log" >&2; exit 2; }
    touch "$in/complete"
fi

# Runs BIN ARGS with stdout to NAME.out and stderr, then the exit
# status, to NAME.err.
run() {
    local name=$1 bin=$2
    shift 2
    "$bin" "$@" >"$name.out" 2>"$name.err" || echo "exit $?" >>"$name.err"
}

# Every output of BIN on experiment EXP goes to directory OUT.
outputs() {
    local bin=$1 exp=$2 out=$3 alpha=()
    mkdir -p "$out"
    # Synthetic experiments record no calibration of the probes.
    case $exp in *synthetic*) alpha=(--alpha 20) ;; esac
    run "$out/analyze" "$bin" analyze "$exp" --json
    run "$out/report" "$bin" report "$exp" --json
    run "$out/compensate" "$bin" compensate "$exp" "${alpha[@]}" -o "$out/compensated"
    if [ -d "$out/compensated" ]; then
        run "$out/compensated-report" "$bin" report "$out/compensated" --json
    fi
    local f
    for f in otf2 perfetto chrome folded svg csv json hatchet; do
        run "$out/export-$f" "$bin" export "$exp" --format "$f" --out "$out/$f.$f"
    done
}

# Both builds import the OTF2 archive this checkout exported from
# experiment NAME into their own output directories.
imports() {
    local name=$1 side bin
    for side in old new; do
        bin=$old
        [ "$side" = new ] && bin=$new
        run "$work/out/$side/$name/import" "$bin" import --no-db \
            "$work/out/new/$name/otf2.otf2" --out "$work/out/$side/$name/imported"
    done
    # The anchor file holds the archive's creation time; the definitions
    # and events beside it are compared file by file.
    rm -f "$work/out/old/$name/otf2.otf2" "$work/out/new/$name/otf2.otf2"
}

# What differs between two runs of the same code: the output paths
# (old/ or new/), the binaries' paths, durations, and a manifest's
# record of the process that wrote it.
normalize() {
    find "$1" -type f \( -name '*.err' -o -name '*.out' -o -name '*.txt' \) -print0 \
        | xargs -0 -r sed -i -E "s#$work/out/(old|new)/#OUT/#g; s# in [0-9.]+ s\b##g; s#\([0-9.]+ M events/s\)##g"
    find "$1" -name manifest.json -print0 | xargs -0 -r /usr/bin/python3 -c '
import json, sys
for p in sys.argv[1:]:
    m = json.load(open(p))
    for k in ("runner", "wall_seconds", "command"):
        m.pop(k, None)
    json.dump(m, open(p, "w"), indent=1, sort_keys=True)
'
    # Files over a megabyte are kept as their hash (the outputs of a
    # polling program's millions of events fill gigabytes).
    find "$1" -type f -size +1M -print0 | while IFS= read -r -d '' f; do
        sha256sum <"$f" >"$f.sha256"
        rm "$f"
    done
}

echo "same-output: running both builds" >&2
rm -rf "$work/out"
n=0
for exp in "$in"/demo "$in"/demo-profile "$in"/synthetic64 "$in"/gt/*/; do
    exp=${exp%/}
    [ -d "$exp" ] || continue
    name=${exp#"$in"/}
    outputs "$old" "$exp" "$work/out/old/$name"
    outputs "$new" "$exp" "$work/out/new/$name"
    imports "$name"
    normalize "$work/out/old/$name"
    normalize "$work/out/new/$name"
    n=$((n + 1))
done

if diff -r -q "$work/out/old" "$work/out/new" >"$work/differ.txt"; then
    echo "same-output: $n experiments, every output identical to $base's" >&2
    exit 0
fi
echo "same-output: outputs differ from $base's:" >&2
sed "s#$work/out/##g" "$work/differ.txt" >&2
exit 1
