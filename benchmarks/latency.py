#!/usr/bin/env python
"""How long one load takes on this GPU, idle and under a kernel's load, and how many bytes each
kernel keeps requested per SM (Little's law).

    python benchmarks/latency.py --out DIR          # DIR/latency.json and a table (~40 s on an H100)
    python benchmarks/latency.py --out DIR --rounds 3 --background copy,padded

**Pointer chase.** One thread follows a chain of indices through a buffer: every load's address is
the value the previous load returned, so no two loads overlap and the time per hop is the round trip
of one load (%globaltimer over thousands of hops). The hops land on distinct 128-byte lines.
Footprints: ``l2`` (8 MiB, read once before timing: the L2's latency), ``dram`` (1 GiB, in random
order inside each 2 MiB block, the blocks in turn: every hop misses the L2 while the address
translation stays warm, as for a kernel streaming through its array) and ``dram_tlb`` (1 GiB in one
random order: translation misses too).

**Under load.** The ``dram`` chase again, on a high-priority stream, while a course kernel runs back
to back on another stream over an 8192 x 8192 float matrix (``copy``, ``padded``, ``padded_32x8``,
``vec64``). Stamps of the global timer before and after the background launches give its
bandwidth over the same window, and the chase must lie inside that window (``inside``); a spin
kernel first lets the background reach a steady state.

**Little's law.** A kernel that reads B bytes per second per SM while a load takes L seconds keeps
B x L bytes requested and not yet returned per SM, on average. With L the chase's latency under
that kernel's own load, that is what each kernel keeps in flight (notebook 06 compares it with the
most its launch can have in flight).

Caveat: the chase measures one dependent load among the background's; it is the latency such a
load sees, which is the mean latency of the background's loads only approximately. Without a GPU it
says so and exits 0. Nothing here asserts a time.
"""
from __future__ import annotations

import argparse
import datetime
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from course_lib import gpu, transposes  # noqa: E402

LINE = 128                   # bytes between two hops' words: one line, four sectors
BLOCK = 2 << 20              # 2 MiB: the chase stays inside one such block for a while (address translation)
PATTERNS = {"l2": (8 << 20, BLOCK), "dram": (1 << 30, BLOCK), "dram_tlb": (1 << 30, None)}

SOURCE = r"""
extern "C" __global__ void chase(const unsigned long long* buf, unsigned long long start, int warm, int hops,
                                 unsigned long long* result)
{   // one thread: each load's address is the previous load's value, so the loads never overlap
    unsigned long long i = start, t0, t1;
    for (int k = 0; k < warm; ++k) i = buf[i];
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0) : : "memory");
    for (int k = 0; k < hops; ++k) i = buf[i];
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1) : : "memory");
    result[0] = t0; result[1] = t1; result[2] = i;        // i: keeps the chain live
}
extern "C" __global__ void stamp(unsigned long long* t, int k)
{
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t[k]) : : "memory");
}
extern "C" __global__ void spin(unsigned long long ns)
{
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
}
"""


def visit_order(slots: int, block_slots: int | None, rng) -> np.ndarray:
    """The order the chase visits `slots` slots: random inside each run of `block_slots`, the runs
    in turn; or (block_slots None) one random permutation of all of them."""
    if block_slots is None or block_slots >= slots:
        return rng.permutation(slots)
    if slots % block_slots:
        raise ValueError(f"{slots} slots are not whole blocks of {block_slots}")
    inside = rng.permuted(np.tile(np.arange(block_slots), (slots // block_slots, 1)), axis=1)
    return (inside + np.arange(0, slots, block_slots)[:, None]).ravel()


def chain(order: np.ndarray, words_per_slot: int) -> tuple[np.ndarray, np.ndarray]:
    """(positions, values): word positions[k] holds values[k], the position of the next slot to
    visit (the last points back to the first), so following the values visits `order`."""
    pos = order.astype(np.uint64) * np.uint64(words_per_slot)
    return pos, np.roll(pos, -1)


def little_bytes(read_bytes_per_s: float, sms: int, latency_s: float) -> float:
    """Little's law: bytes requested and not yet returned, per SM, on average."""
    return read_bytes_per_s / sms * latency_s


class Chaser:
    """Chains on the device and the kernels that walk them."""

    def __init__(self, cp, rng):
        self.cp = cp
        mod = cp.RawModule(code=SOURCE)
        self.chase, self.stamp, self.spin = (mod.get_function(n) for n in ("chase", "stamp", "spin"))
        self.result = cp.zeros(3, cp.uint64)
        self.buffers, self.orders = {}, {}
        for name, (nbytes, block) in PATTERNS.items():
            slots = nbytes // LINE
            order = visit_order(slots, None if block is None else block // LINE, rng)
            pos, val = chain(order, LINE // 8)
            buf = cp.zeros(nbytes // 8, cp.uint64)
            buf[cp.asarray(pos)] = cp.asarray(val)
            self.buffers[name], self.orders[name] = buf, order

    def walk(self, pattern, first, warm, hops, stream=None) -> tuple[float, int, int]:
        """(seconds per hop, t0, t1) of `hops` hops after `warm`, from slot order[first]."""
        cp, buf, order = self.cp, self.buffers[pattern], self.orders[pattern]
        start = np.uint64(int(order[first % len(order)]) * (LINE // 8))
        args = (buf, start, np.int32(warm), np.int32(hops), self.result)
        if stream is None:
            self.chase((1,), (1,), args)
        else:
            with stream:
                self.chase((1,), (1,), args)
        cp.cuda.Device().synchronize()
        t0, t1, _ = (int(x) for x in self.result.get())
        return (t1 - t0) * 1e-9 / hops, t0, t1


def priority_stream(cp):
    """A non-blocking stream with the device's highest priority (CUDA clamps the number), or a plain
    one where this CuPy cannot make one: (stream, whether it has priority)."""
    try:
        handle = cp.cuda.runtime.streamCreateWithPriority(1, -1000)
        return cp.cuda.ExternalStream(handle), True
    except AttributeError:
        return cp.cuda.Stream(non_blocking=True), False


def unloaded(ch: Chaser, rounds: int, hops: int) -> dict:
    out = {}
    for name in PATTERNS:
        slots = len(ch.orders[name])
        warm = slots if name == "l2" else 2000          # l2: one pass first, so every line is in L2
        per = [ch.walk(name, (r + 1) * slots // (rounds + 2), warm, hops)[0] * 1e9 for r in range(rounds)]
        out[name] = dict(ns=per, median=statistics.median(per), min=min(per), max=max(per),
                         footprint_bytes=PATTERNS[name][0], hops=hops)
    return out


def loaded_round(cp, ch, fast_stream, key, n, first, hops, seconds_bg=0.04, settle=0.008) -> dict:
    """One chase under `key` running back to back on the null-priority stream."""
    t = transposes.kernel(key, np.float32)
    func = gpu.device_function(t.function)
    a = cp.random.random((n, n), dtype=np.float32) + 0.5
    out = cp.empty_like(a)
    grid, block = t.config(n, n)
    args = (out, a, np.int32(n), np.int32(n))
    one = t.time(a, out, repeat=5)
    launches = max(20, int(np.ceil(seconds_bg / one)))
    stamps = cp.zeros(2, cp.uint64)
    bg = cp.cuda.Stream(non_blocking=True)
    cp.cuda.Device().synchronize()
    with bg:
        ch.stamp((1,), (1,), (stamps, np.int32(0)))
        for _ in range(launches):
            func(grid, block, args)
        ch.stamp((1,), (1,), (stamps, np.int32(1)))
    with fast_stream:
        ch.spin((1,), (1,), (np.uint64(int(settle * 1e9)),))
    per_hop, c0, c1 = ch.walk("dram", first, 200, hops, stream=fast_stream)
    s0, s1 = (int(x) for x in stamps.get())
    window = (s1 - s0) * 1e-9
    nbytes = n * n * 4
    return dict(ns=per_hop * 1e9, inside=bool(s0 + 1_000_000 < c0 and c1 < s1), launches=launches,
                single_launch_s=one, window_s=window, read_bytes_per_s=launches * nbytes / window,
                effective_gbps=2 * launches * nbytes / window / 1e9,
                chase_window=[c0 - s0, c1 - s0], background_window=[0, s1 - s0])


def loaded(cp, ch, keys, rounds, n, hops, sms, fast, out=None, save=lambda: None) -> dict:
    """Each background kernel `rounds` times: the chase's latency under it and Little's law, into
    `out` (`save()` after each kernel, so a run cut short keeps what it measured)."""
    out = {} if out is None else out
    slots = len(ch.orders["dram"])
    for key in keys:
        per = [loaded_round(cp, ch, fast, key, n, (r + 7) * slots // (rounds + 9), hops) for r in range(rounds)]
        ok = [p for p in per if p["inside"]]
        ns = [p["ns"] for p in ok] or [p["ns"] for p in per]
        rd = [p["read_bytes_per_s"] for p in ok] or [p["read_bytes_per_s"] for p in per]
        kb = [little_bytes(b, sms, x * 1e-9) / 1024 for b, x in zip(rd, ns)]
        out[key] = dict(rounds=per, rounds_inside=len(ok), ns=dict(median=statistics.median(ns), min=min(ns),
                        max=max(ns)), read_gbps_per_sm=statistics.median(rd) / sms / 1e9,
                        effective_gbps=statistics.median(p["effective_gbps"] for p in per),
                        in_flight_kib_per_sm=dict(median=statistics.median(kb), min=min(kb), max=max(kb)))
        save()
    return out


def report(data, log=sys.stdout):
    print(f"{data['meta']['device']}, {data['meta']['sm_count']} SMs", file=log)
    print("\nidle: one thread, ns per load (median [min-max])", file=log)
    for name, u in data["unloaded"].items():
        print(f"  {name:<9} {u['footprint_bytes'] >> 20:6d} MiB  {u['median']:7.0f}  [{u['min']:.0f}-{u['max']:.0f}]",
              file=log)
    print(f"\nunder load ({data['meta']['size']}^2 floats): dram chase ns, the background's GB/s, Little's law",
          file=log)
    for key, x in data["loaded"].items():
        f = x["in_flight_kib_per_sm"]
        print(f"  {key:<12} {x['ns']['median']:6.0f} ns [{x['ns']['min']:.0f}-{x['ns']['max']:.0f}]  "
              f"{x['effective_gbps']:6.0f} GB/s  read {x['read_gbps_per_sm']:5.2f} GB/s/SM  "
              f"in flight {f['median']:5.1f} KiB/SM [{f['min']:.1f}-{f['max']:.1f}]  "
              f"({x['rounds_inside']}/{len(x['rounds'])} chases inside the window)", file=log)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, default=Path("/tmp/latency"), help="directory for latency.json")
    p.add_argument("--rounds", type=int, default=5, help="chases per pattern and per background")
    p.add_argument("--hops", type=int, default=20000, help="timed hops of an idle chase")
    p.add_argument("--loaded-hops", type=int, default=6000, help="timed hops of a chase under load")
    p.add_argument("--background", default="copy,padded,padded_32x8,vec64", help="course kernels, comma list")
    p.add_argument("--size", type=int, default=8192, help="the background's matrix is SIZE x SIZE floats")
    args = p.parse_args(argv)
    keys = [k.strip() for k in args.background.split(",") if k.strip()]
    unknown = [k for k in keys if k not in transposes.SPECS]
    if unknown or args.rounds < 1:
        p.error(f"unknown kernel(s) {', '.join(unknown)}" if unknown else "--rounds must be at least 1")
    if not gpu.available():
        print("benchmarks/latency.py: no NVIDIA GPU is available here (or COURSE_LIB_BACKEND=sim), so there is "
              "nothing to measure. Run it on a GPU machine.")
        return 0
    import cupy as cp
    start = time.perf_counter()
    info = gpu.info()
    ch = Chaser(cp, np.random.default_rng(2026))
    fast = priority_stream(cp)
    data = dict(meta=dict(device=info.name, arch=info.arch, sm_count=info.sm_count, size=args.size,
                          date=datetime.datetime.now().isoformat(timespec="seconds"), priority_stream=fast[1],
                          command="python benchmarks/latency.py " + " ".join(argv if argv is not None else sys.argv[1:])),
                unloaded=unloaded(ch, args.rounds, args.hops), loaded={})
    args.out.mkdir(parents=True, exist_ok=True)

    def save():
        data["meta"]["seconds"] = round(time.perf_counter() - start, 1)
        (args.out / "latency.json").write_text(json.dumps(data, indent=1))
    save()
    loaded(cp, ch, keys, args.rounds, args.size, args.loaded_hops, info.sm_count, fast[0], data["loaded"], save)
    report(data)
    print(f"\nwrote {args.out / 'latency.json'} in {data['meta']['seconds']:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
