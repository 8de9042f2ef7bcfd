"""A bandwidth MODEL: the GB/s a GPU would reach, from the simulator's exact counts.

The simulator counts memory traffic exactly but cannot time anything. This model asks how long
three parts of a chosen GPU would be busy with that traffic, then combines them:

=====  ========================================================================================
DRAM   useful bytes / (datasheet peak x ``dram_efficiency``): what a perfect copy achieves.
L2     bytes crossing between L1 and L2 / ``l2_gbps``: the useful bytes, plus the unused part
       of every sector a store touches, weighted by ``partial_store_cost`` (L2 merges partly
       written sectors byte by byte, dearer than whole ones), plus the unused part of the
       sectors loads touch that L1 does not already hold (strided loads find ``l1_reuse`` of
       their extra sectors in L1, fetched there by the block's other warps).
SM     clocks of work inside the SMs / (SMs x clock), all competing for the same SM, so they
       add: one per shared wavefront (bank conflicts land here), ``cycles_per_line`` per
       128-byte line a global request touches (strided: 32 per request), ``cycles_per_thread``
       per thread (index maths, bounds tests, barriers, waiting) and ``cycles_per_request``
       per warp-level load or store.
=====  ========================================================================================

    time = (t_dram^p + t_l2^p + t_sm^p)^(1/p)      # a soft maximum: p large = perfect overlap
    GB/s = (bytes loaded + bytes stored) / time     # the course's effective bandwidth

Counts grow with the matrix, so a small simulated matrix (a multiple of the tile, e.g. 256 x 256)
predicts a large one (the measurements are 8192 x 8192); launch overhead is ignored. TMA and
bulk copies (``SimRun.tma_counts``) add their bytes and sectors, and nothing to requests or wavefronts.
STATUS says how close the model is; :func:`calibrate` refits it to new measurements.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ..sim.movement.tma import TMA_READ_BYTES, TMA_READ_SECTORS, TMA_WRITE_BYTES, TMA_WRITE_SECTORS

STATUS = ("H100: calibrated on 60 measurements of 2026-11-22 (benchmarks/results/h100_2026-11-22/b_bench.txt) "
          "and checked against the 64 of 2026-11-23 (16 course kernels x float32/float64/float16/uint8 at "
          "8192 x 8192, benchmarks/results/h100_2026-11-23/b_bench.txt; per_row and warp_pipe left out: "
          "latency and scheduling, which this model does not describe): typical error 9%, largest 28% (copy "
          "uint8). Ranking: of the 362 kernel pairs more than 10% apart on the H100 the model orders all but 3 "
          "the same way (vec/aos for float32, swizzle/padded_32x8 and packed/vec64 for uint8); closer pairs may "
          "swap (benchmarks/calibrate_model.py prints this). H200: the H100's constants with its datasheet "
          "bandwidth and its measured best copy (2026-11-27, benchmarks/results/h200_2026-11-27_bench), not "
          "refitted: on the same 16 kernels typical error 15%, largest 28% (vec64 uint8), 4 of 396 pairs "
          "misordered; on all 27 kernels with Hopper's (TMA, cp.async, shuffles) typical 25%, largest 158% "
          "(shuffle uint8). T4, L4, A100 and RTX 4090: datasheet bandwidth, SMs and clocks with the H100's "
          "constants, unmeasured (no such card here) — trust their ranking, not their GB/s.")


@dataclass(frozen=True)
class GPU:
    name: str
    peak_gbps: float        # datasheet DRAM bandwidth (memory clock x bus width x 2)
    sms: int                # streaming multiprocessors
    clock_ghz: float        # boost clock; memory-bound kernels run near it
    dram_efficiency: float  # best large copy measured / peak
    l2_gbps: float          # L1 <-> L2 bandwidth (no datasheet figure: fitted, or a guess)


GPUS = {
    # datasheet DRAM bandwidth, SMs and boost clock; dram_efficiency and l2_gbps are guesses unless noted
    "T4": GPU("T4", 320, 40, 1.59, 0.80, 1100),          # GDDR6 256-bit, Turing TU104 (sm_75): unmeasured
    "L4": GPU("L4", 300, 58, 2.04, 0.80, 1300),          # GDDR6 192-bit, Ada AD104 (sm_89): unmeasured
    "A100": GPU("A100", 2039, 108, 1.41, 0.90, 4500),    # A100 80GB SXM, HBM2e (sm_80): unmeasured
    "RTX 4090": GPU("RTX 4090", 1008, 128, 2.52, 0.85, 5000),   # GDDR6X 384-bit, Ada AD102 (sm_89): unmeasured
    "H100": GPU("H100", 3352, 132, 1.98, 0.892, 5183),   # H100 SXM5 HBM3; copy 2991 GB/s, L2 fitted
    # H200 SXM, HBM3e: the H100's die with faster memory, so its L2 figure; best copy 3877 GB/s measured
    # (benchmarks/results/h200_2026-11-27_bench)
    "H200": GPU("H200", 4800, 132, 1.98, 0.808, 5183),
}


@dataclass(frozen=True)
class Knobs:
    """Fitted to the H100 measurements (see STATUS)."""
    l1_reuse: float = 0.735            # strided loads: most extra sectors are found in L1
    partial_store_cost: float = 3.09   # an unused byte of a stored sector costs L2 3.1 useful bytes
    cycles_per_line: float = 0.314     # about three scattered 128-byte lines per clock per SM
    cycles_per_thread: float = 0.762   # SM clocks per thread
    cycles_per_request: float = 0.706  # SM clocks per warp-level load or store
    p: float = 2.52                    # overlap of DRAM, L2 and SM work


KNOBS = Knobs()


def gpu(name_or_gpu) -> GPU:
    if isinstance(name_or_gpu, GPU):
        return name_or_gpu
    try:
        return GPUS[str(name_or_gpu).upper()]
    except KeyError:
        raise KeyError(f"no model for '{name_or_gpu}'; known: {', '.join(GPUS)}") from None


def traffic(run) -> dict:
    """The counts the model uses, totalled over the launch (bytes, sectors, lines, wavefronts...).

        model.traffic(run)["wavefronts"]
    """
    t = dict(useful_ld=0, useful_st=0, sectors_ld=0, sectors_st=0, wavefronts=0, requests=0, lines=0.0,
             threads=math.prod(run.grid) * math.prod(run.block))
    per_sector = _lines_per_sector(run)
    for r in run.instructions:
        if r["op"] == "ldgsts":    # a cp.async's shared side: the same instruction, fitted without it (STATUS)
            continue
        t["requests"] += r["requests"]
        if r["space"] == "global":
            t[f"useful_{r['op']}"] += r["bytes"]
            t[f"sectors_{r['op']}"] += r["sectors"]
            t["lines"] += r["sectors"] * per_sector.get(r["pc"], 0.25)
        elif r["space"] == "shared":
            t["wavefronts"] += r["wavefronts"]
    # TMA and bulk copies bypass the load/store unit (no rows, no requests, no wavefronts), but their
    # bytes cross DRAM and L2 like any others, in whole sectors of whole lines
    tma = getattr(run, "tma_counts", None) or {}
    for op, nbytes, sectors in (("ld", TMA_READ_BYTES, TMA_READ_SECTORS), ("st", TMA_WRITE_BYTES, TMA_WRITE_SECTORS)):
        t[f"useful_{op}"] += tma.get(nbytes, 0)
        t[f"sectors_{op}"] += tma.get(sectors, 0)
        t["lines"] += tma.get(sectors, 0) / 4
    return t


def _lines_per_sector(run) -> dict:
    """Per global instruction: 128-byte lines per 32-byte sector, from the traced block's addresses
    (1 when every sector of a request lies in its own line, 1/4 when a request fills whole lines)."""
    lines, sectors = {}, {}
    for a in run.accesses:
        if a["space"] == "global":
            for w in a["addresses"]:
                w = w[w >= 0]
                lines[a["pc"]] = lines.get(a["pc"], 0) + len(set((w >> 7).tolist()))
                sectors[a["pc"]] = sectors.get(a["pc"], 0) + len(set((w >> 5).tolist()))
    return {pc: lines[pc] / sectors[pc] for pc in lines if sectors[pc]}


def times(run, on="H100", knobs: Knobs | None = None) -> dict:
    """Seconds each part would be busy for the simulated launch: dram, l2, sm.

        model.times(run, "T4")        # {'dram': ..., 'l2': ..., 'sm': ...}
    """
    g, k, t = gpu(on), knobs or KNOBS, run if isinstance(run, dict) else traffic(run)
    useful = t["useful_ld"] + t["useful_st"]
    unused_st = max(0, 32 * t["sectors_st"] - t["useful_st"])
    unused_ld = max(0, 32 * t["sectors_ld"] - t["useful_ld"])
    return dict(
        dram=useful / (g.peak_gbps * 1e9 * g.dram_efficiency),
        l2=(useful + k.partial_store_cost * unused_st + (1 - k.l1_reuse) * unused_ld) / (g.l2_gbps * 1e9),
        sm=(t["wavefronts"] + k.cycles_per_line * t["lines"] + k.cycles_per_thread * t["threads"]
            + k.cycles_per_request * t["requests"]) / (g.sms * g.clock_ghz * 1e9))


def predict(run, on="H100", knobs: Knobs | None = None) -> float:
    """Modelled effective bandwidth in GB/s of the simulated kernel on GPU `on`.

        _, run = transposes.kernel("padded", np.float32).simulate(a)   # a: 256 x 256
        model.predict(run, "H100")                                     # about 1700 (measured 1638)
    """
    k = knobs or KNOBS
    t = run if isinstance(run, dict) else traffic(run)
    seconds = sum(v ** k.p for v in times(t, on, k).values()) ** (1 / k.p)
    return (t["useful_ld"] + t["useful_st"]) / seconds / 1e9 if seconds else 0.0


def bottleneck(run, on="H100") -> str:
    """The part that is busiest: 'dram', 'l2' or 'sm' (shared memory, scattered lines, threads).

        model.bottleneck(sim.run("tile").sim)      # 'sm': the 32-way bank conflicts
    """
    ts = times(run, on)
    return max(ts, key=ts.get)


def copy_gbps(on="H100") -> float:
    """The modelled copy ceiling: what DRAM delivers to a perfectly coalesced copy.

        model.copy_gbps("A100")
    """
    g = gpu(on)
    return g.peak_gbps * g.dram_efficiency


def calibrate(measured: dict, runs: dict, on="H100", copy: float | None = None):
    """Fit the constants to measurements. `measured`: key -> GB/s on that GPU (e.g. (kernel, dtype)
    from ``python -m course_lib bench``); `runs`: the same keys -> SimRun (a multiple of the tile);
    `copy`: the best measured copy GB/s (sets dram_efficiency). Returns (gpu, knobs, report): put
    them in GPUS, Knobs' defaults and STATUS. Coordinate search on log error from a few starts."""
    g0 = gpu(on)
    if copy:
        g0 = replace(g0, dram_efficiency=min(1.0, copy / g0.peak_gbps))
    traffics = {n: traffic(r) for n, r in runs.items()}
    limits = dict(l1_reuse=(0, 0.99), p=(1, 16), partial_store_cost=(0.1, 20), cycles_per_line=(0.02, 4),
                  l2_gbps=(g0.peak_gbps, 4 * g0.peak_gbps))      # L2 is faster than DRAM

    def err(gg, kk):
        return sum(math.log(predict(traffics[n], gg, kk) / v) ** 2 for n, v in measured.items())

    best = None
    for p0, cpt0 in ((1.5, 0.3), (3, 0.3), (1.5, 1), (3, 1), (8, 1)):
        g, k = g0, replace(KNOBS, p=p0, cycles_per_thread=cpt0)
        e = err(g, k)
        for step in (2.0, 1.5, 1.25, 1.1, 1.05, 1.02):
            for _ in range(3):
                for name in ("l2_gbps", *Knobs.__dataclass_fields__):
                    obj = g if name == "l2_gbps" else k
                    for f in (step, 1 / step):
                        lo, hi = limits.get(name, (1e-3, 100))
                        trial = replace(obj, **{name: min(hi, max(lo, getattr(obj, name) * f))})
                        gg, kk = (trial, k) if name == "l2_gbps" else (g, trial)
                        if (et := err(gg, kk)) < e:
                            e, g, k = et, gg, kk
        if best is None or e < best[0]:
            best = (e, g, k)
    e, g, k = best
    worst = max(abs(predict(traffics[n], g, k) / v - 1) for n, v in measured.items())
    typical = math.exp(math.sqrt(e / len(measured))) - 1
    return g, k, f"{on}: typical error {typical:.0%}, largest {worst:.0%} over {len(measured)} measurements"


def ranking(values: dict, tie: float = 0.05) -> list:
    """Keys from fastest to slowest, neighbours within `tie` grouped: [['copy', 'padded_32x8'], ...]."""
    order = sorted(values, key=values.get, reverse=True)
    groups = [[order[0]]] if order else []
    for n in order[1:]:
        if values[groups[-1][-1]] <= values[n] * (1 + tie):
            groups[-1].append(n)
        else:
            groups.append([n])
    return groups
