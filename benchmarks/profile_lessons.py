#!/usr/bin/env python
"""The profiler commands each notebook shows, run on a GPU exactly as a student would type them.

    python benchmarks/profile_lessons.py --out DIR        # on a GPU machine with ncu, compute-sanitizer
    python benchmarks/profile_lessons.py --list           # the commands, anywhere

For notebooks 03 to 11, each entry is one command line: Nsight Compute (`ncu`) with the metrics
that lesson teaches, or `compute-sanitizer --tool racecheck` on notebook 04's kernel without its
barrier. Each launches one course kernel once through ``python -m course_lib run``. The output of
every command, exactly as printed, goes to DIR/lesson_profiles.txt, one section per command:

    ### <notebook> | <what it shows>
    $ <the command>
    <its output>

(one file, because a GPU lease returns few files; ``course_lib.lessons.profiles`` reads it).
"""
from __future__ import annotations

import argparse
import datetime
import os
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

G_LD = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
G_ST = "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"
S_LD = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"
S_ST = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"
TIME = "gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum"
OCC = "sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__occupancy_limit_registers"
RUN = "python -m course_lib run"


def ncu(metrics, args):
    return f"ncu --metrics {metrics} {RUN} {args}"


RACY = "benchmarks/lesson_kernels/tile_without_barrier.cu"

COMMANDS = [
    ("03", "the copy: 4 sectors per request both ways", ncu(f"{G_LD},{G_ST}", "copy")),
    ("03", "naive_row: coalesced loads, 32 sectors per store request", ncu(f"{G_LD},{G_ST}", "naive_row")),
    ("03", "naive_col: the reverse", ncu(f"{G_LD},{G_ST}", "naive_col")),
    ("04", "the tile: global side fixed, 32-way conflicts on the column read",
     ncu(f"{G_LD},{G_ST},{S_LD},{S_ST}", "tile")),
    ("04", "racecheck on the tile without __syncthreads()",
     f"compute-sanitizer --tool racecheck {RUN} {RACY}:tile_without_barrier --block 32x32 --tile 32 --shape 64x64"),
    ("05", "32 x 32 tile: bank conflicts", ncu(f"{S_LD},{S_ST}", "tile")),
    ("05", "padded by one: none", ncu(f"{S_LD},{S_ST}", "padded")),
    ("06", "32 x 32 threads, one element each", ncu(f"{TIME},{OCC}", "padded")),
    ("06", "32 x 8 threads, four elements each", ncu(f"{TIME},{OCC}", "padded_32x8")),
    ("07", "float4 loads and stores (vec)", ncu(f"{G_LD},{G_ST},{S_LD},{S_ST}", "vec")),
    ("07", "64 x 64 swizzled tile (vec64)", ncu(f"{G_LD},{G_ST},{S_LD},{S_ST},{TIME}", "vec64")),
    ("08", "structs of 6 floats, plain mapping", ncu(f"{G_LD},{S_LD},{S_ST}", "aos --shape 1048576x6 --param MAP=0")),
    ("08", "structs of 6 floats, Giles's mapping", ncu(f"{G_LD},{S_LD},{S_ST}", "aos --shape 1048576x6 --param MAP=1")),
    ("09", "doubles: half-warp phases", ncu(f"{G_LD},{G_ST},{S_LD},{S_ST}", "padded_32x8 --dtype f64")),
    ("09", "bytes one at a time", ncu(f"{G_LD},{G_ST},{TIME}", "padded_32x8 --dtype u8")),
    ("09", "bytes packed into words", ncu(f"{G_LD},{G_ST},{TIME}", "packed --dtype u8")),
    ("10", "aligned rows: 8192 x 8192", ncu(f"{G_LD},{G_ST},{TIME}", "padded_32x8 --shape 8192x8192")),
    ("10", "misaligned rows: 8191 x 8193", ncu(f"{G_LD},{G_ST},{TIME}", "padded_32x8 --shape 8191x8193")),
    ("11", "the fastest course kernel", ncu(f"{G_LD},{G_ST},{TIME}", "fast --shape 8192x8192")),
    ("11", "the copy it is measured against", ncu(f"{G_LD},{G_ST},{TIME}", "copy --shape 8192x8192")),
]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path)
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args(argv)
    if args.list or not args.out:
        for nb, what, cmd in COMMANDS:
            print(f"{nb} {what}\n   $ {cmd}")
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               COURSE_LIB_BACKEND="gpu", PYTHONUNBUFFERED="1")
    parts = [f"# profile_lessons.py, {datetime.datetime.now().isoformat(timespec='seconds')}\n"]
    for nb, what, cmd in COMMANDS:
        argv_ = shlex.split(cmd)
        argv_ = [sys.executable if a == "python" else a for a in argv_]   # the same Python, but shown as typed
        proc = subprocess.run(argv_, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
        text = (proc.stdout + proc.stderr).rstrip()
        parts.append(f"### {nb} | {what}\n$ {cmd}\n{text}\n(exit {proc.returncode})\n")
        print(f"{nb} {what}: exit {proc.returncode}", flush=True)
    (args.out / "lesson_profiles.txt").write_text("\n".join(parts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
