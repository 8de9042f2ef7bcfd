"""Properties that judge the order of a kernel's asynchronous copies and its exact counts.

    pipelined()      # the next stage's cp.async copies are in flight while the current one is read
    in_flight_at_reads(run)   # how many groups of copies a thread's shared reads may overlap (0: one stage)
    within_budget(sectors=..., wavefronts=..., instructions=...)   # what a kernel spends, at most a budget

``pipelined`` follows every path through the kernel's PTX (branches and loops) together with the run's
per-instruction counts (``in_flight_at_reads``): at some shared-memory load the run executed, a group
that holds ``cp.async`` copies may still be in flight, committed before the last ``cp.async.wait_group N``
and among the newest N it leaves. One stage (copy, commit, wait 0, read; or copy, commit, an empty
commit, wait 1, read) has none: the copies of the next tile start only after the current tile was read. It does not prove that the copies in flight are the next tile's (a kernel
could keep an unrelated group open); each_element_once and async_copies, judged beside it, leave a
kernel no bytes of its own to spare for that.

``within_budget`` compares what a run spends (``sim.results.spend``: global sectors, shared wavefronts
with cp.async's writes into shared memory, every PTX instruction a warp executes) with a budget per
1024 elements of the tiles the launch covers, on every shape: exact counts, the same on every machine.
Neither property runs a kernel (runs.py does).
"""
from __future__ import annotations

from ..sim.results.spend import COUNTS, spend
from .properties import Property

PIPELINE_HINT = ("while the threads read tile s, tile s + 1's group must already be committed and still on its "
                 "way: start it into the other buffer before the wait, and let the wait leave the newest group in "
                 "flight (the question above the check asks how many); a tile with no next one still commits a "
                 "group, so that the wait keeps its meaning")


def _wait_keep(ins) -> int | None:
    """N of `cp.async.wait_group N` (0 for wait_all), None for any other instruction."""
    if ins.opcode != "cp" or "bulk" in ins.mods:
        return None
    if "wait_all" in ins.mods:
        return 0
    if "wait_group" in ins.mods:
        try:
            return int(ins.operands[0].value)
        except (AttributeError, TypeError, ValueError):
            return 0
    return None


def in_flight_at_reads(run) -> int:
    """The most groups holding cp.async copies a thread may still have on their way when it executes a
    shared load, over every path through the kernel's PTX (branches and loops followed, both sides of an
    ``if``): a commit closes the thread's current group (with copies or empty), ``wait_group N`` leaves the
    newest N groups in flight (``wait_all``: none), and at every shared load the run executed the groups
    left that hold copies are counted. One stage at a time gives 0 (copy, commit, wait 0, read; or copy,
    commit, an empty commit, wait 1, read: the group left in flight is empty); a pipeline reading tile s
    while tile s + 1's copies travel gives 1."""
    executed = {r["pc"] for r in run.instructions if r["space"] == "shared" and r["op"] == "ld" and r["requests"]}
    code, labels = run.kernel.instructions, run.kernel.labels
    seen = {0: {((), False)}}            # pc -> states reaching it: (groups committed and not waited for, copied)
    work, most = [0], 0
    while work:
        pc = work.pop()
        if pc >= len(code):
            continue
        ins, after = code[pc], set()
        for pending, copied in seen[pc]:
            if pc in executed:
                most = max(most, sum(pending))
            after.add(_step(ins, pending, copied))
        for nxt in _successors(ins, pc, labels):
            have = seen.setdefault(nxt, set())
            if not after <= have:
                have |= after
                work.append(nxt)
    return most


def _step(ins, pending, copied):
    """The state after `ins`: a commit closes the current group, a wait keeps the newest N, a copy marks."""
    keep = _wait_keep(ins)
    if keep is not None:
        return (pending[len(pending) - keep:] if keep else ()), copied
    if ins.opcode == "cp" and "commit_group" in ins.mods:
        return (pending + (copied,))[-8:], False         # more than 8 groups deep: no wait reaches them
    if ins.opcode == "cp" and "bulk" not in ins.mods and "mbarrier" not in ins.mods:
        return pending, True
    return pending, copied


def _successors(ins, pc, labels):
    if ins.opcode in ("ret", "exit", "trap") and ins.guard is None:
        return ()
    if ins.opcode != "bra" or not ins.operands or ins.operands[0].name not in labels:
        return (pc + 1,)
    target = labels[ins.operands[0].name]
    return (target,) if ins.guard is None else (target, pc + 1)


def pipelined() -> Property:
    """The next stage's cp.async copies stay in flight while the current stage is read (see the module)."""
    def test(run, on):
        if not any(_wait_keep(i) is not None for i in run.kernel.instructions):
            return False
        if in_flight_at_reads(run):
            return None
        return ("one stage at a time: every read of shared memory comes after a wait for all copies "
                "(__pipeline_wait_prior(0)), so no tile's copies are on their way while another tile is written")
    return Property("the next tile's copies in flight while this one is read", test, PIPELINE_HINT)


def totals(run) -> dict:
    """What a run spends (``sim.results.spend``): global sectors, shared wavefronts (cp.async's writes into
    shared memory included), PTX instructions executed per warp."""
    s = spend(run)
    return {k: getattr(s, k) for k in COUNTS}


# What the refusal quotes, per 1024 float32 elements of whole 32 x 32 tiles (tests/teach/test_pipeline.py
# derives both from the simulator): the course's best kernel, and naive_col standing in for CuPy's
# ascontiguousarray(a.T), which moves memory as it does, one element per thread (a library does not run on
# the simulator; CuPy's own kernel computes its index with more instructions: benchmarks/ldgsts_check.py
# measures both with ncu on a GPU).
REFERENCE = {"the course's best (fast)": {"sectors": 256, "wavefronts": 64, "instructions": 704},
             "CuPy's one thread per element (naive_col stands in)": {"sectors": 1152, "wavefronts": 0,
                                                                     "instructions": 992}}
MISALIGNED = 1.5     # sectors where rows do not start on sector boundaries: coalesced()'s allowance, 6 per 4


def _line(counts: dict) -> str:
    return ", ".join(f"{counts[k]:g} {k}" for k in COUNTS)


def tiles_covered(on) -> int:
    """Tiles of the exercise's launch over the shape: the grid rounds each side up to whole tiles."""
    tx, ty = getattr(on, "tile", None) or (32, 32)
    return -(-on.cols // tx) * -(-on.rows // ty) * getattr(on, "batch", 1)


def within_budget(**budget) -> Property:
    """Each named count of ``spend`` (sectors, wavefronts, instructions) at most `budget[name]` per 1024
    elements of the tiles the launch covers (the grid rounds up to whole tiles, so a partial tile counts as
    a whole one: the launch is the exercise's, not the student's), judged on every shape; where rows do not
    start on 32-byte sectors the sectors may be MISALIGNED times the budget, as coalesced() allows. The
    refusal shows all three counts beside REFERENCE's."""
    unknown = set(budget) - set(COUNTS)
    if unknown:
        raise ValueError(f"within_budget: no count {', '.join(sorted(unknown))}; known: {', '.join(COUNTS)}")
    budget = {k: float(v) for k, v in budget.items()}

    def test(run, on):
        tx, ty = getattr(on, "tile", None) or (32, 32)
        per = spend(run).per(tiles_covered(on) * tx * ty)
        aligned = on.aligned("ld") and on.aligned("st")
        limit = {k: v * (MISALIGNED if k == "sectors" and not aligned else 1) for k, v in budget.items()}
        over = [f"{name} {per[name]:g} per 1024 elements (budget {limit[name]:g})"
                for name in COUNTS if name in limit and per[name] > limit[name]]
        if not over:
            return None
        copies = sum(r["wavefronts"] for r in run.instructions if r["space"] == "shared" and r["op"] == "ldgsts")
        mine = _line(per) + (f" ({copies * 1024 / (tiles_covered(on) * tx * ty):g} of the wavefronts are cp.async's "
                             "writes into shared memory)" if copies else "")
        refs = "; ".join(f"{who}: {_line(c)}" for who, c in REFERENCE.items())
        return f"over the budget: {'; '.join(over)} — yours: {mine}; {refs}"
    words = ", ".join(f"{budget[k]:g} {k}" for k in COUNTS if k in budget)
    return Property(f"at most {words} per 1024 elements", test,
                    "spend less: a coalesced 16-byte global access moves a warp's 512 bytes in 16 sectors with one "
                    "instruction where 4-byte ones need four (notebook 07's float4), a padded tile read by column costs "
                    "one wavefront per request, and every instruction counts, index arithmetic and loop control "
                    "as much as loads and stores: fewer, wider steps per thread")
