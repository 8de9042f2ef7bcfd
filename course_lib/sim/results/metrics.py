"""Count memory traffic per warp exactly as Nsight Compute does (Volta to Hopper).

Global loads/stores (``l1tex__t_requests/sectors_pipe_lsu_mem_global_op_{ld,st}``): one request
per warp-level instruction with at least one active thread; sectors = distinct 32-byte
sectors touched by the active threads' bytes.

Shared loads/stores (``l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st}`` and
``..._bank_conflicts_...``): the warp's active threads are split into phases (4-byte and
narrower accesses: one phase of 32; 8-byte: two half-warps; 16-byte: four quarter-warps).
For loads of 8 or 16 bytes, if every active thread t reads the same address as t^1 — or
every one the same as t^2 — the phase doubles in size (a partner that is not active does not
count against it). A phase costs the largest number of distinct 4-byte words one bank must
deliver (equal addresses merge: broadcast); wavefronts are the sum over phases. A phase
ideally needs ceil(distinct words / 32) wavefronts; conflicts are wavefronts minus that.

cp.async's writes into shared memory (``l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts``, and
the wavefronts ``smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts``): the store rule on
the copies' destinations with the copy's width (``Counters.add_ldgsts``), in counters of their own, as
ncu keeps them apart from the stores. Checked on every launch an H100 measured with that counter
(tests/sim/test_ldgsts_agreement.py); a kernel whose other warps use shared memory meanwhile can
count more on the GPU, by timing (async_result's note).

These are the rules of shared/docs/memory-rules.md, made precise for partial warps and for
the conflict count by 738 warp patterns measured on an H100 with ncu
(benchmarks/ncu_shared_probe.py; results in benchmarks/results/h100_2026-11-22/).

What is counted is the machine code's loads and stores, one per SASS instruction: ptxas fuses
neighbouring narrow accesses it can prove aligned into one wider instruction (four ld.shared.f32
into an LDS.128; a row of 2-byte loads t[lane][i], i = 0..31, into 15 4-byte LDS and 2 LDS.U16,
which the H100 counted as 1088 wavefronts where the PTX asks for 2048) and loads a repeated
address once. sim/fusion.py reads those groups from the SASS (NVRTC 13.0 and nvdisasm, for the
architecture compile.nvrtc.MACHINE_ARCH names); access.py then calls these functions once per group,
with the SASS width and the group's address (aligned down to that width), and not at all for the
other members. Measured on an H100 and
reproduced: notebook 08's AoS read with I = 4 (one LDS.128: 125 wavefronts, 0 conflicts over
1000 structs, where the PTX's four loads ask for 500 and 372). The fused patterns of
benchmarks/ncu_compare.py (structs of 2-64 floats, rows of 1-4 byte elements, the 2-byte row
above as row_read<unsigned short, 34>, a repeated load): 16 of 16 launches agree on an H100
(2026-11-24, benchmarks/results/h100_2026-11-24/c_ncu.md). Where there is no machine code (no NVRTC 13 or nvdisasm,
PTX given as text) or an access cannot be matched to it, that access is counted as the PTX has
it and the run's warnings say so. Limits: the SASS is NVRTC 13.0's for the H100; another compiler
(CuPy's NVRTC 12 for the GPU at hand) may fuse differently.

All functions take full-warp arrays: ``addr`` of shape (nwarps, 32) and ``active`` (bool) of
the same shape; they never see threads of two warps together.
"""
from __future__ import annotations

import numpy as np

from ...compile.ptx import TYPES

SENTINEL = np.iinfo(np.int64).max

METRIC_NAMES = {
    ("global", "ld", "requests"): "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    ("global", "st", "requests"): "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    ("global", "ld", "sectors"): "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    ("global", "st", "sectors"): "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    ("shared", "ld", "wavefronts"): "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    ("shared", "st", "wavefronts"): "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    ("shared", "ld", "conflicts"): "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    ("shared", "st", "conflicts"): "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
}

# cp.async's shared side (LDGSTS writing the copy into shared memory): ncu counts it under op_ldgsts, apart
# from the stores, and SimRun.metrics has these keys only for a kernel whose cp.async copies ran
LDGSTS_NAMES = {
    "wavefronts": "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum",
    "conflicts": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts.sum",
}


def _distinct_per_row(keys: np.ndarray) -> np.ndarray:
    """Number of distinct non-sentinel values in each row."""
    s = np.sort(keys, axis=1)
    new = np.ones(s.shape, np.bool_)
    new[:, 1:] = s[:, 1:] != s[:, :-1]
    return (new & (s != SENTINEL)).sum(axis=1)


def global_sectors(addr: np.ndarray, active: np.ndarray, width: int):
    """(requests, sectors) for one global instruction over whole warps.

    An aligned access of at most 32 bytes never straddles a sector, so each active thread
    contributes the sector of its first byte (misaligned accesses fault before this)."""
    if active.all():
        return addr.shape[0], int(_distinct_per_row(addr >> 5).sum())
    rows = active.any(axis=1)
    if not rows.any():
        return 0, 0
    a, act = addr[rows], active[rows]
    keys = np.where(act, a >> 5, SENTINEL)
    return int(rows.sum()), int(_distinct_per_row(keys).sum())


def shared_wavefronts(addr: np.ndarray, active: np.ndarray, width: int, is_load: bool):
    """(wavefronts, conflicts, requests) for one shared instruction over whole warps."""
    if active.all():
        a, act, nreq = addr, active, addr.shape[0]
    else:
        rows = active.any(axis=1)
        if not rows.any():
            return 0, 0, 0
        a, act, nreq = addr[rows], active[rows], int(rows.sum())
    p = 1 if width <= 4 else (2 if width == 8 else 4)
    if is_load and p > 1:
        merged = pairs_share_address(a, act, 1) | pairs_share_address(a, act, 2)
        if merged.any():
            w1, c1 = _cost(a[merged], act[merged], width, p // 2)
            w2, c2 = _cost(a[~merged], act[~merged], width, p) if not merged.all() else (0, 0)
            return w1 + w2, c1 + c2, nreq
    wf, cf = _cost(a, act, width, p)
    return wf, cf, nreq


def pairs_share_address(a, act, xor):
    """Per warp: does every active thread t whose partner t^xor is active read the same
    address as it? (An inactive partner does not stand in the way: measured on an H100.)"""
    partner = np.arange(32) ^ xor
    return np.all(~act | ~act[:, partner] | (a[:, partner] == a), axis=1)


def _cost(a, act, width, phases):
    """Wavefronts and conflicts for warps split into `phases` equal groups of lanes.

    Each phase's words are sorted by (bank, word); a running count of distinct words that
    restarts at every new bank gives, at its maximum, the busiest bank's load."""
    nw = a.shape[0]
    k = max(1, width // 4)
    words = (a >> 2).astype(np.int32)
    if k > 1:
        words = (words[:, :, None] + np.arange(k, dtype=np.int32)).reshape(nw, 32 * k)
        act = np.repeat(act, k, axis=1)
    # shared addresses are < 2**24 bytes, so bank (5 bits) and word (22 bits) fit one int32
    keys = ((words & 31) << 26) | words
    if not act.all():
        keys = np.where(act, keys, np.int32(0x7FFFFFFF))
    s = np.sort(keys.reshape(nw * phases, -1), axis=1)
    valid = s != 0x7FFFFFFF
    distinct = np.empty(s.shape, np.bool_)
    distinct[:, 0] = True
    np.not_equal(s[:, 1:], s[:, :-1], out=distinct[:, 1:])
    distinct &= valid
    bank = s >> 26
    new_bank = np.empty(s.shape, np.bool_)
    new_bank[:, 0] = True
    np.not_equal(bank[:, 1:], bank[:, :-1], out=new_bank[:, 1:])
    seen = np.cumsum(distinct, axis=1, dtype=np.int32)
    base = np.maximum.accumulate(np.where(new_bank, seen - distinct, 0), axis=1)
    cost = (seen - base).max(axis=1)
    wavefronts = int(cost.sum())
    ideal = int(((seen[:, -1] + 31) // 32).sum())      # a phase moves at most 32 words per wavefront
    return wavefronts, wavefronts - ideal


class Counters:
    """Per-instruction counts, accumulated over the whole launch. Global and shared traffic are
    kept apart because a generic ld/st can reach either space (even both in one instruction)."""

    def __init__(self, n_instructions: int):
        z = lambda: np.zeros(n_instructions, np.int64)
        self.global_requests, self.sectors, self.global_bytes = z(), z(), z()
        self.shared_requests, self.wavefronts, self.conflicts, self.shared_bytes = z(), z(), z(), z()
        # cp.async's writes into shared memory (LDGSTS's shared side), which ncu counts apart (op_ldgsts)
        self.ldgsts_requests, self.ldgsts_wavefronts, self.ldgsts_conflicts, self.ldgsts_bytes = z(), z(), z(), z()
        self.warp_instructions = np.zeros(n_instructions + 1, np.int64)   # per PTX instruction: warps that ran it
        self.patterns: dict = {}      # one warp's pattern -> its cost (see per_pattern)

    @property
    def requests(self):
        return self.global_requests + self.shared_requests

    @property
    def bytes(self):
        return self.global_bytes + self.shared_bytes

    def add_global(self, pc, addr, active, width):
        r, s = per_pattern(global_sectors, addr, active, SECTOR, (width,), self.patterns)
        self.global_requests[pc] += r
        self.sectors[pc] += s
        self.global_bytes[pc] += int(active.sum()) * width

    def add_shared(self, pc, addr, active, width, is_load):
        w, c, r = per_pattern(shared_wavefronts, addr, active, WORD, (width, is_load), self.patterns)
        self.shared_requests[pc] += r
        self.wavefronts[pc] += w
        self.conflicts[pc] += c
        self.shared_bytes[pc] += int(active.sum()) * width

    def add_ldgsts(self, pc, addr, active, width):
        """The shared side of one cp.async over whole warps: the destinations cost what a shared store
        of the copy's width to them costs (quarter-warp phases for 16 bytes...), in counters of its own."""
        w, c, r = per_pattern(shared_wavefronts, addr, active, WORD, (width, False), self.patterns)
        self.ldgsts_requests[pc] += r
        self.ldgsts_wavefronts[pc] += w
        self.ldgsts_conflicts[pc] += c
        self.ldgsts_bytes[pc] += int(active.sum()) * width


SECTOR, WORD = 32, 4


def per_pattern(cost, addr, active, unit, args, memo):
    """``cost(addr, active, *args)``, computed once for all the warps whose active lanes' addresses
    are the first warp's moved by a multiple of `unit` bytes.

    That moves every sector by the same number of sectors (unit 32: the same count of distinct
    sectors) or every 4-byte word by the same number of words, so each bank's load moves to
    another bank unchanged (unit 4: the same wavefronts and conflicts). In a regular kernel all
    full warps of an instruction match, and their cost is one warp's times their number; the
    warps that differ (partial tiles, edges) are costed as they are. `memo` keeps one warp's
    cost by pattern, across instructions and batches. Warps with no active lane cost nothing in either
    cost and are left out first: under a branch that one thread takes, a batch's thousand warps were
    compared lane by lane for every access of that thread, and an idle first warp set a pattern no
    working warp matched."""
    full = active.all()
    if not full:
        live = active.any(axis=1)
        if live.any() and not live.all():
            addr, active = addr[live], active[live]
    if addr.shape[0] < 4:
        return cost(addr, active, *args)
    rel = addr - (addr[:, :1] & -unit)
    if full:
        same = rel == rel[0]
        same = np.ones(addr.shape[0], np.bool_) if same.all() else same.all(axis=1)
    else:
        same = ((active == active[0]) & ((rel == rel[0]) | ~active)).all(axis=1)
    key = (cost, unit, args, rel[0].tobytes(), active[0].tobytes())
    one = memo.get(key)
    if one is None:
        one = memo[key] = cost(addr[:1], active[:1], *args)
    matched = int(same.sum())
    if matched == addr.shape[0]:
        return tuple(matched * x for x in one)
    rest = cost(addr[~same], active[~same], *args)
    return tuple(matched * x + y for x, y in zip(one, rest))


# ----------------------------------------------------------------------------- naming

def annotate(m) -> str:
    """'global ld: 1.0 sectors/req; shared st: 32 wavefronts' for a line's metrics."""
    bits = []
    for op in ("ld", "st"):
        req = m[METRIC_NAMES[("global", op, "requests")]]
        if req:
            bits.append(f"global {op}: {m[METRIC_NAMES[('global', op, 'sectors')]] / req:.1f} sectors/req")
        wf = m[METRIC_NAMES[("shared", op, "wavefronts")]]
        if wf:
            c = m[METRIC_NAMES[("shared", op, "conflicts")]]
            bits.append(f"shared {op}: {wf} wavefronts" + (f", {c} conflicts" if c else ""))
    wf = m.get(LDGSTS_NAMES["wavefronts"])
    if wf:
        c = m[LDGSTS_NAMES["conflicts"]]
        bits.append(f"cp.async into shared: {wf} wavefronts" + (f", {c} conflicts" if c else ""))
    return "; ".join(bits)


def access_width(ins) -> int:
    """Bytes per thread of a PTX load or store (a vector's whole width)."""
    vec = next((int(m[1:]) for m in ins.mods if m in ("v2", "v4", "v8")), 1)
    return TYPES[ins.type][0] * vec if ins.type in TYPES else 0


def totals(rows) -> dict:
    """Nsight Compute's metrics summed over rows of SimRun.instructions."""
    out = {name: 0 for name in METRIC_NAMES.values()}
    for r in rows:
        sp = r["space"]
        if sp == "global":
            out[METRIC_NAMES[("global", r["op"], "requests")]] += r["requests"]
            out[METRIC_NAMES[("global", r["op"], "sectors")]] += r["sectors"]
        elif sp == "shared" and r["op"] == "ldgsts":
            for what, name in LDGSTS_NAMES.items():
                out[name] = out.get(name, 0) + r[what]
        elif sp == "shared":
            out[METRIC_NAMES[("shared", r["op"], "wavefronts")]] += r["wavefronts"]
            out[METRIC_NAMES[("shared", r["op"], "conflicts")]] += r["conflicts"]
    return out
