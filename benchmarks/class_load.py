"""How many students a class hub serves per core: 10, 20 and 40 students at once on a real JupyterHub
on this machine (deploy/local_hub.py), each in their own server and kernel, each running the
course's 1024 x 1024 simulations.

    python benchmarks/class_load.py --out benchmarks/results/cpu_2026-11-26_class
    python benchmarks/class_load.py --students 10 --rounds 2 --paced-seconds 20 --out /tmp/quick

Needs JupyterHub in this Python (`pip install -e ".[hub]"`) and configurable-http-proxy from npm.
For each class size N it starts a hub, creates N students through the REST API, starts their
servers at once and opens a kernel in each, which imports the course and compiles the kernels it
will simulate (every student has their own compile cache, as on a hub). Then:

- bursts: every student runs one ``sim.run(kernel, shape=(1024, 1024))`` at the same moment, one
  round per kernel: notebook 05's naive_row, tile, padded, padded_32x8, then a tile kernel of the
  student's own (a %%cuda cell's): the worst case, a whole class pressing Shift-Enter together.
  Time per cell is measured at the client (request to idle); CPU per simulation is what the hub,
  proxy, servers and kernels used in all (/proc), and, inside the kernel, the simulation alone;
- paced: for ``--paced-seconds`` each student runs the same cell every P seconds from a random
  start, P chosen so that the N kernels put the load of ``--goal`` students per core, each running
  one simulation every ``--period`` (30) seconds, on this machine's cores; its time per cell says
  whether such a class still gets answers in about a second;
- memory per student: the server's and the kernel's PSS and RSS (/proc), idle after the imports
  and at the peak of the bursts.

Students per core = period / (the class's CPU seconds per simulation): the class size that keeps one core
busy; the table also gives it at 70 % busy, where waits stay short. Writes class_load.json (every
measurement) and class_load.md (the table) into --out.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "deploy"))
from kernel_client import Kernel  # noqa: E402
from local_hub import PROXY_HINT, LocalHub, descendants, find_proxy  # noqa: E402

# a student's own kernel, as an exercise's %%cuda cell would hold it (every student compiles their own)
STUDENT_KERNEL = r"""
#define TILE 32
#define BLOCK_ROWS 8
extern "C" __global__ void my_tile(float* out, const float* in, int rows, int cols) {
    __shared__ float t[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += BLOCK_ROWS)
        if (x < cols && y + j < rows) t[threadIdx.y + j][threadIdx.x] = in[(y + j) * cols + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += BLOCK_ROWS)
        if (x < rows && y + j < cols) out[(y + j) * rows + x] = t[threadIdx.x][threadIdx.y + j];
}
"""
# what a round runs: notebook 05's course kernels, then the student's own
KERNELS = {"naive_row": "'naive_row'", "tile": "'tile'", "padded": "'padded'", "padded_32x8": "'padded_32x8'",
           "student tile": "mine, block=(32, 8), tile=32"}
SETUP = ("import time, course_lib as cl\n"
         "sim = cl.Simulator()\n"
         f"mine = cl.RawModule(code={STUDENT_KERNEL!r}).get_function('my_tile')\n"
         "for k in ('naive_row', 'tile', 'padded', 'padded_32x8'):\n"
         "    sim.run(k, shape=(64, 64))          # compiles it, as a student's first run does\n")
CELL = ("t0 = time.process_time()\n"
        "r = sim.run({kernel}, shape=(1024, 1024))\n"
        "print(bool(r.correct), time.process_time() - t0)")


def memory_of(pids) -> dict:
    """PSS and RSS in MiB summed over `pids` (/proc/PID/smaps_rollup)."""
    total = {"pss": 0.0, "rss": 0.0}
    for pid in pids:
        try:
            text = Path(f"/proc/{pid}/smaps_rollup").read_text()
        except OSError:
            continue
        for line in text.splitlines():
            name, _, rest = line.partition(":")
            if name in ("Pss", "Rss"):
                total[name.lower()] += int(rest.split()[0]) / 1024
    return total


class Class:
    """N students on one hub, a kernel each."""

    def __init__(self, hub: LocalHub, names):
        self.hub, self.names, self.kernels, self.servers = hub, list(names), {}, {}

    async def open(self):
        self.hub.add_students(self.names)
        ready = await asyncio.to_thread(self.hub.start_servers, self.names)
        self.servers = {n: self.hub.server_pid(n) for n in self.names}
        setups = await asyncio.gather(*(self._kernel_for(n) for n in self.names))
        bad = [s.error for s in setups if s.status != "ok"]
        if bad:
            raise RuntimeError(f"setup failed: {bad[:3]}")
        return {"spawn_s": max(ready.values()), "setup_s": [s.seconds for s in setups],
                "kernels_restarted": self.restarted}

    restarted = 0

    async def _kernel_for(self, name, tries=3):
        """A kernel for `name` that ran SETUP. Forty kernels starting at once on one machine can pick
        the same free ZMQ port (jupyter_client chooses ports before binding them); the loser dies at
        start and its websocket closes, so open another (counted in the results)."""
        for attempt in range(tries):
            kernel = await Kernel.open(self.hub.url, self.hub.token, name, "class_load.ipynb")
            try:
                reply = await kernel.execute(SETUP)
            except ConnectionError:
                await kernel.close()
                self.restarted += 1
                if attempt == tries - 1:
                    raise
                continue
            self.kernels[name] = kernel
            return reply

    def memory(self) -> dict:
        return {n: memory_of([pid, *descendants(pid)]) for n, pid in self.servers.items()}

    async def cell(self, name, kernel_key) -> dict:
        reply = await self.kernels[name].execute(CELL.format(kernel=KERNELS[kernel_key]))
        printed = "".join(o.get("text", "") for o in reply.outputs).split()
        if reply.status != "ok" or printed[:1] != ["True"]:
            raise RuntimeError(f"{name}: {kernel_key}: {reply.error or printed}")
        return {"kernel": kernel_key, "wall_s": reply.seconds, "cpu_s": float(printed[1])}

    async def close(self):
        await asyncio.gather(*(k.close() for k in self.kernels.values()), return_exceptions=True)


async def sample_memory(klass: Class, peaks: dict, stop: asyncio.Event):
    while not stop.is_set():
        for name, m in (await asyncio.to_thread(klass.memory)).items():
            for key, value in m.items():
                peaks.setdefault(name, {}).setdefault(key, 0.0)
                peaks[name][key] = max(peaks[name][key], value)
        await asyncio.sleep(0.5)


def cpu_seconds(pids) -> float:
    """CPU seconds (user + system) the processes `pids` have used so far (/proc/PID/stat)."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def class_cpu(klass: Class) -> float:
    """CPU seconds used so far by the hub, its proxy and every student's server and kernels: the
    class's own load, whatever else runs on this machine."""
    hub = klass.hub.process.pid
    return cpu_seconds([hub, *descendants(hub)])


async def bursts(klass: Class, rounds: int) -> dict:
    peaks, stop = {}, asyncio.Event()
    sampler = asyncio.create_task(sample_memory(klass, peaks, stop))
    cells, busy0, t0 = [], class_cpu(klass), time.perf_counter()
    for r in range(rounds):
        key = list(KERNELS)[r % len(KERNELS)]
        cells += await asyncio.gather(*(klass.cell(n, key) for n in klass.names))
    wall, busy = time.perf_counter() - t0, class_cpu(klass) - busy0
    stop.set()
    await sampler
    return {"cells": cells, "wall_s": wall, "class_cpu_s": busy, "peak_memory": peaks}


async def paced(klass: Class, period: float, seconds: float) -> dict:
    """Each student runs the cell every `period` s from a random start, for `seconds`."""
    cells, end = [], time.perf_counter() + seconds

    async def student(name, i):
        await asyncio.sleep(random.uniform(0, period))
        nxt = time.perf_counter()
        while nxt < end:
            cells.append(await klass.cell(name, list(KERNELS)[i % len(KERNELS)]))
            i, nxt = i + 1, nxt + period
            await asyncio.sleep(max(0.0, nxt - time.perf_counter()))
    busy0 = class_cpu(klass)
    await asyncio.gather(*(student(n, i) for i, n in enumerate(klass.names)))
    return {"period_s": period, "seconds": seconds, "cells": cells, "class_cpu_s": class_cpu(klass) - busy0}


async def measure(n: int, args, folder: Path) -> dict:
    hub = LocalHub(folder / f"hub-{n}", environment={"COURSE_LIB_BACKEND": "sim"}, start_timeout=600)
    klass = Class(hub, [f"s{i:03d}" for i in range(n)])
    try:
        hub.start()
        opened = await klass.open()
        idle = klass.memory()
        burst = await bursts(klass, args.rounds)
        period = args.period * n / (args.goal * os.cpu_count())
        pace = await paced(klass, period, args.paced_seconds) if args.paced_seconds > 0 else None
        return {"students": n, **opened, "idle_memory": idle, "bursts": burst, "paced": pace}
    finally:
        await klass.close()
        hub.stop()


def _q(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] if values else float("nan")


def summary(run: dict, period: float) -> dict:
    cells, n = run["bursts"]["cells"], run["students"]
    cpu = run["bursts"]["class_cpu_s"] / len(cells)         # the simulation and what serving it costs
    peak = run["bursts"]["peak_memory"]
    row = {"students": n, "spawn_s": run["spawn_s"],
           "burst_wall_p50_s": _q([c["wall_s"] for c in cells], 0.5), "burst_wall_max_s": max(c["wall_s"] for c in cells),
           "kernel_cpu_per_sim_s": statistics.mean(c["cpu_s"] for c in cells),
           "cpu_per_sim_s": cpu,
           "idle_pss_mib": statistics.mean(m["pss"] for m in run["idle_memory"].values()),
           "peak_pss_mib": max(m["pss"] for m in peak.values()), "peak_rss_mib": max(m["rss"] for m in peak.values()),
           "students_per_core": period / cpu, "students_per_core_at_70pct": 0.7 * period / cpu}
    if run["paced"]:
        walls = [c["wall_s"] for c in run["paced"]["cells"]]
        row.update(paced_period_s=run["paced"]["period_s"], paced_cells=len(walls),
                   paced_wall_p50_s=_q(walls, 0.5), paced_wall_p95_s=_q(walls, 0.95), paced_wall_max_s=max(walls),
                   paced_busy=run["paced"]["class_cpu_s"] / (run["paced"]["seconds"] * os.cpu_count()))
    return row


def table(rows, args) -> str:
    head = (f"Class load on a real JupyterHub, {os.cpu_count()} cores ({platform.processor() or platform.machine()}), "
            f"each student one 1024 x 1024 simulation every {args.period:g} s; goal {args.goal} students per core.\n\n"
            "| students | spawn all (s) | burst: time per cell p50 / max (s) | CPU per simulation (s) | "
            "students per core (100 % / 70 % busy) | memory per student idle / peak PSS, peak RSS (MiB) | "
            f"paced at {args.goal}/core: period, cells, time per cell p50 / p95 / max (s), cores busy |\n"
            "|---|---|---|---|---|---|---|\n")
    lines = []
    for r in rows:
        paced = (f"{r['paced_period_s']:.2f} s, {r['paced_cells']}, {r['paced_wall_p50_s']:.2f} / "
                 f"{r['paced_wall_p95_s']:.2f} / {r['paced_wall_max_s']:.2f}, {100 * r['paced_busy']:.0f} %"
                 if "paced_cells" in r else "not run")
        lines.append(f"| {r['students']} | {r['spawn_s']:.1f} | {r['burst_wall_p50_s']:.2f} / {r['burst_wall_max_s']:.2f} | "
                     f"{r['cpu_per_sim_s']:.3f} (kernel: {r['kernel_cpu_per_sim_s']:.3f}) | "
                     f"{r['students_per_core']:.0f} / {r['students_per_core_at_70pct']:.0f} | "
                     f"{r['idle_pss_mib']:.0f} / {r['peak_pss_mib']:.0f}, {r['peak_rss_mib']:.0f} | {paced} |")
    return head + "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--students", type=int, nargs="+", default=[10, 20, 40])
    ap.add_argument("--rounds", type=int, default=len(KERNELS), help="bursts per class size (one kernel each)")
    ap.add_argument("--period", type=float, default=30.0, help="seconds between a student's simulations")
    ap.add_argument("--goal", type=int, default=150, help="students per core the paced phase loads the machine with")
    ap.add_argument("--paced-seconds", type=float, default=60.0)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    if find_proxy() is None:
        print(PROXY_HINT, file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    git = lambda *a: subprocess.run(["git", "-C", str(REPO), *a], capture_output=True, text=True).stdout.strip()
    commit = git("rev-parse", "HEAD") + (" (with uncommitted changes)" if git("status", "--porcelain", "--untracked-files=no") else "")
    meta = {"date": time.strftime("%Y-%m-%d %H:%M"), "commit": commit, "cores": os.cpu_count(),
            "loadavg_before": os.getloadavg(), "python": sys.version.split()[0], "args": vars(args) | {"out": str(args.out)}}
    runs, scratch = [], Path(tempfile.mkdtemp(prefix="class-load-"))
    for n in args.students:
        print(f"{n} students...", flush=True)
        try:
            runs.append(asyncio.run(measure(n, args, scratch)))
        except Exception:
            print(f"failed; the hub's log and the students' homes are kept in {scratch / f'hub-{n}'}", file=sys.stderr)
            raise
        print(table([summary(runs[-1], args.period)], args).splitlines()[-1], flush=True)
    shutil.rmtree(scratch, ignore_errors=True)
    meta["loadavg_after"] = os.getloadavg()
    rows = [summary(r, args.period) for r in runs]
    (args.out / "class_load.json").write_text(json.dumps({"meta": meta, "summary": rows, "runs": runs}, indent=1))
    (args.out / "class_load.md").write_text(table(rows, args))
    print(table(rows, args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
