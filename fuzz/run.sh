#!/usr/bin/env bash
# Runs the fuzz targets (parallax-model's readers, the analyses and the
# HTML report's data on experiments made from the input) on a stable
# toolchain.
#
#   fuzz/run.sh [SECONDS] [TARGET...]
#
# SECONDS is the time per target (default 60); TARGETs default to all of
# them. SANITIZER=none skips AddressSanitizer (then no -Z flag is needed and
# RUSTC_BOOTSTRAP is not set); JOBS=n runs n fuzzing processes per target.
# Exits non-zero if a target finds a crash; the input that crashed is in
# fuzz/artifacts/TARGET/.
set -euo pipefail

cd "$(dirname "$0")"
secs="${1:-60}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(read_events read_defs read_profile compensate analyze html_data)
fi
sanitizer="${SANITIZER:-address}"
jobs="${JOBS:-1}"

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "fuzz/run.sh: installing cargo-fuzz from crates.io" >&2
    cargo install cargo-fuzz --locked
fi

# cargo-fuzz passes -Zsanitizer=... for a sanitizer, which only a nightly
# compiler accepts; RUSTC_BOOTSTRAP=1 lets the stable one accept it too.
if [ "$sanitizer" != none ]; then
    export RUSTC_BOOTSTRAP=1
fi

# Seed each corpus with real files once, so that fuzzing starts from inputs
# that pass the header and checksum checks.
if [ -z "$(ls -A corpus/analyze 2>/dev/null)" ] || [ -z "$(ls -A corpus/html_data 2>/dev/null)" ]; then
    cargo run --quiet --release --example seed -- corpus
fi

status=0
for t in "${targets[@]}"; do
    echo "== $t: ${secs}s, sanitizer $sanitizer, $jobs job(s)" >&2
    mkdir -p "corpus/$t"
    # With -jobs, libFuzzer writes each job's output to fuzz-N.log instead.
    par=()
    if [ "$jobs" -gt 1 ]; then
        par=(-jobs="$jobs" -workers="$jobs")
    fi
    # The analyses' worker threads stay alive until the process exits; the
    # leak checker then counts their thread-local destructors' records
    # (32 bytes each, allocated by the C library) as leaks.
    leaks=()
    case "$t" in
        compensate | analyze) leaks=(-detect_leaks=0) ;;
    esac
    if ! cargo fuzz run -O --sanitizer "$sanitizer" "$t" "corpus/$t" -- \
        -max_total_time="$secs" -print_final_stats=1 "${par[@]}" "${leaks[@]}"; then
        echo "== $t: FAILED (see fuzz/artifacts/$t/)" >&2
        status=1
    fi
done
exit $status
