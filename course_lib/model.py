"""A bandwidth MODEL: the GB/s a GPU would reach, from the simulator's exact counts.

The simulator counts memory traffic exactly but cannot time anything. This model asks how long
four resources of a chosen GPU would be busy with that traffic, then combines the four:

=========  =====================================================================================
DRAM       bytes reaching device memory / (datasheet peak x ``dram_efficiency``). Bytes = useful
           bytes + ``dram_waste`` x the unused part of every sector moved (L2 merges most partly
           used sectors before they reach DRAM, so the waste factor is small on big-L2 GPUs).
L2         bytes crossing between L1 and L2 / ``l2_gbps``. Stores send every sector they touch;
           strided loads find ``l1_reuse`` of their extra sectors already in L1 (the block's
           other warps read the rest of each sector).
SM pipe    (shared wavefronts + global sectors / 4) / (SMs x clock): the L1/shared data pipe
           moves one 128-byte wavefront (4 sectors) per clock per SM. Bank conflicts land here.
threads    threads launched x ``cycles_per_thread`` / (SMs x clock): index maths, bounds tests
           and barriers, paid per thread, so one element per thread costs more than four.
=========  =====================================================================================

    time = (t_dram^p + t_l2^p + t_sm^p + t_threads^p)^(1/p)      # a soft maximum
    GB/s = (bytes loaded + bytes stored) / time                   # the course's effective bandwidth

Everything is proportional to the matrix size, so a small simulated matrix (a multiple of the
tile, e.g. 256 x 256) predicts a large one; launch overhead and the tail of the last wave are
ignored (fine from about 2048 x 2048 up).

Calibration: per GPU, ``dram_efficiency`` (measured copy / peak) and ``l2_gbps``; for all GPUs,
the four :class:`Knobs`. :func:`calibrate` fits them to a table of measured GB/s (one line per
course kernel) and reports the error. STATUS below says where the constants come from.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, replace

STATUS = ("uncalibrated: datasheet peaks and clocks, L2 and knobs from published microbenchmarks; "
          "expect the ranking of the course's kernels, not their GB/s to better than about 30%")


@dataclass(frozen=True)
class GPU:
    name: str
    peak_gbps: float        # datasheet DRAM bandwidth (memory clock x bus width x 2)
    sms: int                # streaming multiprocessors
    clock_ghz: float        # boost clock; memory-bound kernels run near it
    dram_efficiency: float  # a large device-to-device copy / peak (what DRAM really delivers)
    l2_gbps: float          # L1 <-> L2 bandwidth (no datasheet figure: microbenchmarks, then calibrated)


GPUS = {
    "T4": GPU("T4", 320, 40, 1.59, 0.80, 1100),                 # GDDR6 256-bit; Turing TU104
    "A100": GPU("A100", 2039, 108, 1.41, 0.90, 4800),           # A100 80GB SXM, HBM2e
    "H100": GPU("H100", 3352, 132, 1.98, 0.87, 6000),           # H100 SXM5, HBM3; copy 2.9 TB/s
}


@dataclass(frozen=True)
class Knobs:
    l1_reuse: float = 0.85          # share of a strided load's extra sectors served by L1
    dram_waste: float = 0.10        # share of unused sector bytes that still cross DRAM
    cycles_per_thread: float = 0.5  # SM clocks per thread (about 60 instructions / 128 lanes per clock)
    p: float = 3.0                  # overlap: 1 = resources take turns, large = perfect overlap


KNOBS = Knobs()


def gpu(name_or_gpu) -> GPU:
    if isinstance(name_or_gpu, GPU):
        return name_or_gpu
    try:
        return GPUS[str(name_or_gpu).upper()]
    except KeyError:
        raise KeyError(f"no model for '{name_or_gpu}'; known: {', '.join(GPUS)}") from None


def traffic(run) -> dict:
    """The counts the model uses, totalled over the launch (bytes, sectors, wavefronts, threads)."""
    t = dict(useful_ld=0, useful_st=0, sectors_ld=0, sectors_st=0, wavefronts=0,
             threads=math.prod(run.grid) * math.prod(run.block))
    for r in run.instructions:
        if r["space"] == "global":
            t[f"useful_{r['op']}"] += r["bytes"]
            t[f"sectors_{r['op']}"] += r["sectors"]
        elif r["space"] == "shared":
            t["wavefronts"] += r["wavefronts"]
    return t


def times(run, on="H100", knobs: Knobs | None = None) -> dict:
    """Seconds each resource would be busy for the simulated launch: dram, l2, sm, threads."""
    g, k, t = gpu(on), knobs or KNOBS, traffic(run)
    moved_ld, moved_st = 32 * t["sectors_ld"], 32 * t["sectors_st"]
    useful = t["useful_ld"] + t["useful_st"]
    waste = max(0, moved_ld - t["useful_ld"]) + max(0, moved_st - t["useful_st"])
    clocks = g.sms * g.clock_ghz * 1e9
    return dict(
        dram=(useful + k.dram_waste * waste) / (g.peak_gbps * 1e9 * g.dram_efficiency),
        l2=(moved_st + t["useful_ld"] + (1 - k.l1_reuse) * max(0, moved_ld - t["useful_ld"])) / (g.l2_gbps * 1e9),
        sm=(t["wavefronts"] + (t["sectors_ld"] + t["sectors_st"]) / 4) / clocks,
        threads=t["threads"] * k.cycles_per_thread / clocks)


def predict(run, on="H100", knobs: Knobs | None = None) -> float:
    """Modelled effective bandwidth in GB/s of the simulated kernel on GPU `on`.

        _, run = transposes.kernel("padded", np.float32).simulate(a)   # a: 256 x 256
        model.predict(run, "H100")
    """
    k = knobs or KNOBS
    ts = times(run, on, k)
    seconds = sum(v ** k.p for v in ts.values()) ** (1 / k.p)
    t = traffic(run)
    return (t["useful_ld"] + t["useful_st"]) / seconds / 1e9 if seconds else 0.0


def bottleneck(run, on="H100") -> str:
    """The resource that is busiest: 'dram', 'l2', 'sm' (shared memory / L1) or 'threads'."""
    ts = times(run, on)
    return max(ts, key=ts.get)


def copy_gbps(on="H100") -> float:
    """The modelled copy ceiling: what DRAM delivers to a perfectly coalesced copy."""
    g = gpu(on)
    return g.peak_gbps * g.dram_efficiency


def calibrate(measured: dict, runs: dict, on="H100", copy: float | None = None):
    """Fit the constants to measurements. `measured`: kernel -> GB/s on that GPU; `runs`: kernel
    -> SimRun of the same kernel (any size that is a multiple of its tile); `copy`: the measured
    copy GB/s (sets dram_efficiency). Returns (gpu, knobs, report) — assign them to
    ``GPUS[on]`` and ``KNOBS`` (or paste into this file) and update STATUS with the report.
    A grid search over the five constants; takes a few seconds."""
    g = gpu(on)
    if copy:
        g = replace(g, dram_efficiency=copy / g.peak_gbps)
    best = None
    for l2, reuse, waste, cpt, p in itertools.product(
            [g.l2_gbps * f for f in (0.5, 0.7, 0.85, 1, 1.2, 1.5, 2)], (0.5, 0.7, 0.85, 0.95),
            (0, 0.1, 0.25, 0.5), (0.25, 0.5, 1, 2, 4), (1.5, 2, 3, 4, 8)):
        gg, kk = replace(g, l2_gbps=l2), Knobs(reuse, waste, cpt, p)
        err = sum(math.log(predict(runs[n], gg, kk) / v) ** 2 for n, v in measured.items())
        if best is None or err < best[0]:
            best = (err, gg, kk)
    _, gg, kk = best
    pred = {n: predict(runs[n], gg, kk) for n in measured}
    worst = max(abs(pred[n] / v - 1) for n, v in measured.items())
    order_m = sorted(measured, key=measured.get, reverse=True)
    order_p = sorted(measured, key=pred.get, reverse=True)
    report = (f"{on}: largest error {worst:.0%}; measured order {order_m}; modelled order {order_p}"
              + ("" if order_m == order_p else " (DIFFERENT)"))
    return gg, kk, report
