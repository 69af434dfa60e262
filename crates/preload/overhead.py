#!/usr/bin/env python3
"""Wall-time overhead of the interposition library on real programs.

Builds the MPI stencil mini-app (workloads/mpi/stencil.c) and the pthread
task kernel (workloads/c/tasks.c), with and without -finstrument-functions,
and times each configuration ROUNDS times, interleaved:

  plain      the program built without instrumentation, no Parallax
  inst       built with -finstrument-functions, no Parallax (glibc's empty
             hooks)
  profile    inst, measured in profile mode (LD_PRELOAD, PARALLAX_MODE)
  trace      inst, measured in trace mode

Two times per run: the wall time of the whole program (for MPI, of
mpirun) from start to exit, which includes the runtime's start-up
(calibration) and the final flush but also the launcher's noise; and the
time of the program's own main loop, which it prints (`loop_seconds`). The
slowdowns are of the medians, against `plain`; the fastest main loop of
each configuration is shown too (on a shared machine, the least disturbed
run).

Usage (from the workspace, after `cargo build --release -p parallax-preload`):
  python3 crates/preload/overhead.py [--rounds 7] [--lib target/release/libparallax_preload.so]
"""

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def build(tmp):
    w = os.path.join(ROOT, "workloads")
    exes = {}
    for name, cc, src, libs in [
        ("stencil", "mpicc", "mpi/stencil.c", ["-lm"]),
        ("tasks", "gcc", "c/tasks.c", ["-lpthread"]),
    ]:
        for inst in (False, True):
            exe = os.path.join(tmp, name + ("-inst" if inst else ""))
            flags = ["-O2", "-g"] + (["-finstrument-functions"] if inst else [])
            subprocess.run([cc] + flags + [os.path.join(w, src), "-o", exe] + libs, check=True)
            exes[(name, inst)] = exe
    return exes


def cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed(cmd, env):
    c0 = cpu()
    t0 = time.perf_counter()
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    t = time.perf_counter() - t0
    timed.cpu = cpu() - c0
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed: {p.stderr.decode()}")
    loop = [float(l.split()[1]) for l in p.stdout.decode().splitlines() if l.startswith("loop_seconds")]
    return t, loop[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--only", help="measure the programs whose name starts with this")
    ap.add_argument("--lib", default=os.path.join(ROOT, "target/release/libparallax_preload.so"))
    a = ap.parse_args()
    if not os.path.isfile(a.lib):
        sys.exit(f"{a.lib} missing: cargo build --release -p parallax-preload")
    tmp = tempfile.mkdtemp(prefix="parallax-overhead-")
    exes = build(tmp)
    base = dict(os.environ)
    base.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    # name: (program, arguments, units of work, what a unit is)
    programs = {
        # 2 ranks on 2 cores; per iteration a halo exchange (4 messages), a
        # sweep of 200,000 points (~0.25 ms) and every 10th an Allreduce.
        "stencil": ("stencil", ["200000", "2000"], 2000, "iteration"),
        # The same with 1,000 points: the exchange dominates.
        "stencil-fine": ("stencil", ["1000", "20000"], 20000, "iteration"),
        # 2 threads, 20,000 tasks of ~20 us, a lock per task, a barrier every
        # 100 tasks per thread.
        "tasks": ("tasks", ["2", "20000", "20000"], 10000, "task per thread"),
        # Tasks of ~1 us.
        "tasks-fine": ("tasks", ["2", "200000", "1000"], 100000, "task per thread"),
    }

    def command(prog, exe, args):
        return (["mpirun", "-np", "2", exe] if prog == "stencil" else [exe]) + args

    results = {}
    for name, (prog, args, units, unit) in programs.items():
        if a.only and not name.startswith(a.only):
            continue
        cmd = lambda exe: command(prog, exe, args)  # noqa: E731
        times = {c: [] for c in ("plain", "inst", "profile", "trace")}
        loops = {c: [] for c in times}
        cpus = {c: [] for c in times}
        events = {}
        for r in range(a.rounds):
            for conf in times:
                exe = exes[(prog, conf != "plain")]
                env = dict(base)
                out = os.path.join(tmp, f"exp-{name}-{conf}")
                if conf in ("profile", "trace"):
                    shutil.rmtree(out, ignore_errors=True)
                    env.update(LD_PRELOAD=a.lib, PARALLAX_MODE=conf, PARALLAX_OUT=out)
                whole, loop = timed(cmd(exe), env)
                times[conf].append(whole)
                cpus[conf].append(timed.cpu)
                loops[conf].append(loop)
                if conf == "trace" and r == 0:
                    size = sum(
                        os.path.getsize(os.path.join(d, f))
                        for d, _, fs in os.walk(out)
                        for f in fs
                        if f.endswith(".pxe")
                    )
                    events[conf] = size
        print(f"\n{name}: {' '.join(cmd(prog))} (median of {a.rounds})")
        print(
            f"  {'':8} {'whole run':>10} {'':>8}   {'main loop':>10} {'':>8}   "
            f"{'fastest loop':>12} {'':>8}   {'CPU time':>10}"
        )
        mw = {c: statistics.median(v) for c, v in times.items()}
        ml = {c: statistics.median(v) for c, v in loops.items()}
        for c in times:
            sw = 100.0 * (mw[c] / mw["plain"] - 1.0)
            sl = 100.0 * (ml[c] / ml["plain"] - 1.0)
            best = min(loops[c])
            sb = 100.0 * (best / min(loops["plain"]) - 1.0)
            mc = statistics.median(cpus[c])
            sc = 100.0 * (mc / statistics.median(cpus["plain"]) - 1.0)
            per = 1e6 * (ml[c] - ml["plain"]) / units
            print(
                f"  {c:8} {mw[c]:8.3f} s {sw:+7.2f} %   {ml[c]:8.3f} s {sl:+7.2f} %   "
                f"{best:8.3f} s {sb:+7.2f} %   {mc:8.3f} s {sc:+7.2f} %   "
                f"{per:+7.2f} us/{unit}"
            )
        results[name] = (mw, ml, events)
        if "trace" in events:
            print(f"  trace files: {events['trace'] / 1e6:.2f} MB")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
