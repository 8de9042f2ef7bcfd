"""The simulator's three shortcuts give exactly what the long way gives.

- Costing a memory instruction once per warp *pattern* (``metrics.per_pattern``) against costing
  every warp, on regular patterns moved warp by warp, with odd warps and partial activity.
- Looking up only the accesses to granules touched before in the epoch (``races.RaceDetector``)
  against the detector as it was, checking every access (``racecheck_reference``), on random
  access sequences with barriers, exits, __syncwarp and one instruction naming a granule twice:
  the same records, in the same order, and the same reads of unwritten memory.
- Registers sharing storage (``registers.plan_storage``) against every register having its own,
  on course kernels and on divergent code: the same outputs, metrics, races and findings.
"""
import numpy as np
import pytest

import course_lib as cl
from course_lib import transposes
from course_lib.sim import registers
from course_lib.sim.checks import races
from course_lib.sim.results import metrics
from course_lib.transposes import poisoned, random_matrix
from racecheck_reference import OriginalDetector


# ----------------------------------------------------------------------------- costing by pattern

def _warps(rng, nw, width, base, spread, active_kind):
    """Warps of one pattern, each moved by a whole number of elements; some odd ones."""
    pattern = rng.integers(0, spread, 32) * width
    shifts = rng.integers(0, 64, nw) * width
    addr = base + pattern[None, :] + shifts[:, None]
    odd = rng.random(nw) < 0.2                                   # some warps do something else
    addr[odd] = base + rng.integers(0, spread, (int(odd.sum()), 32)) * width
    if active_kind == "all":
        active = np.ones((nw, 32), np.bool_)
    else:
        active = rng.random((nw, 32)) < 0.7
        if active_kind == "lane 0 off":
            active[:, 0] = False
        active[rng.random(nw) < 0.1] = False                     # whole warps with no thread
        if active_kind == "first warp idle":
            active[0] = False
        if active_kind == "one thread":                          # a branch that one thread of the batch takes
            active[:] = False
            active[rng.integers(nw), rng.integers(32)] = True
    return addr.astype(np.int64), active


@pytest.mark.parametrize("width", [1, 2, 4, 8, 16])
@pytest.mark.parametrize("active_kind", ["all", "some", "lane 0 off", "first warp idle", "one thread"])
def test_costing_one_warp_per_pattern_equals_costing_every_warp(width, active_kind):
    rng = np.random.default_rng(width)
    memo = {}
    for trial in range(20):
        spread = (1, 4, 40, 400)[trial % 4]
        addr, active = _warps(rng, 37, width, 1024, spread, active_kind)
        for is_load in (True, False):
            expected = metrics.shared_wavefronts(addr, active, width, is_load)
            got = metrics.per_pattern(metrics.shared_wavefronts, addr, active, metrics.WORD, (width, is_load), memo)
            assert got == expected, (trial, is_load)
        addr, active = _warps(rng, 37, width, 1 << 40, spread * 8, active_kind)
        expected = metrics.global_sectors(addr, active, width)
        assert metrics.per_pattern(metrics.global_sectors, addr, active, metrics.SECTOR, (width,), memo) == expected


# ----------------------------------------------------------------------------- deferred race checks

def _race_script(rng, nblocks, tp, per_block, k, steps, mode):
    """Random accesses by the live threads of live blocks; barriers; blocks leaving at a barrier."""
    live = list(range(nblocks))
    for _ in range(steps):
        roll = rng.random()
        if roll < 0.08:
            released = [b for b in live if rng.random() < 0.8] or live[:1]
            whole = len(released) == len(live)
            live = released
            yield ("barrier", None if whole else np.array(released))
        elif roll < 0.12:
            yield ("syncwarp", np.flatnonzero(rng.random(nblocks * tp) < 0.5))
        else:
            slots = np.flatnonzero(np.isin(np.arange(nblocks * tp) // tp, live) & (rng.random(nblocks * tp) < 0.6))
            if slots.size == 0:
                continue
            if mode == "crowded":             # a few granules, often the same one within an instruction
                spot = rng.integers(0, 4, slots.size)
            else:                             # one granule per thread, another thread's in the next access
                slots = slots[slots % tp < per_block - k + 1]
                spot = (slots % tp + rng.integers(0, 3)) % (per_block - k + 1)
            if slots.size == 0:
                continue
            first = (slots // tp) * per_block + spot
            entries = first[:, None] + np.arange(k)
            is_write = bool(rng.random() < 0.5)
            values = rng.integers(0, 3, entries.shape).astype(np.uint32) if is_write else None
            yield ("access", (int(rng.integers(0, 6)), slots, entries, is_write, values))


@pytest.mark.parametrize("seed", range(24))
def test_checking_only_granules_touched_twice_finds_every_race_the_shadow_finds(seed):
    rng = np.random.default_rng(seed)
    nblocks, tp, granule, k = 3, 64, 4, 1 + (seed // 3) % 2
    detector = races.RaceDetector(nblocks, 12 * granule * 2, granule, tp).reset(nblocks)
    reference = OriginalDetector(nblocks, 12 * granule * 2, granule, tp)
    for kind, what in _race_script(rng, nblocks, tp, detector.per_block, k, 160, ("crowded", "spread")[seed % 3 > 0]):
        if kind == "barrier":
            detector.barrier(what)
            reference.barrier_all() if what is None else reference.barrier(what)
        elif kind == "syncwarp":
            detector.syncwarp(what)
            reference.syncwarp(what)
        else:
            fresh, expected = detector.access(*what), reference.access(*what)
            assert (fresh is None) == (expected is None) and (fresh is None or (fresh == expected).all())
    assert reference.records, "the script should race"
    assert list(detector.records.items()) == list(reference.records.items())


def test_reads_of_unwritten_granules_are_found_as_they_happen():
    detector = races.RaceDetector(2, 64, 4, 32).reset(2)
    slots = np.arange(4)
    e = np.array([[0], [1], [2], [3]])
    assert detector.access(0, slots, e, False).tolist() == [True] * 4
    detector.access(1, slots[:2], e[:2], True, np.ones((2, 1), np.uint32))
    assert detector.access(2, slots, e, False).tolist() == [False, False, True, True]
    detector.barrier_all()
    assert detector.access(3, slots[:2], e[:2], False) is None    # written before the barrier: still written


# ----------------------------------------------------------------------------- shared register storage

DIVERGENT = r'''
__global__ void divergent(float* out, const float* in, int n) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    float acc;                                   // set on some paths only
    if (t % 3 == 0) acc = in[t % n];
    else if (t % 3 == 1) { for (int i = 0; i < t % 7; i++) acc = in[(t + i) % n] * 2.0f; }
    __shared__ float s[64];
    s[threadIdx.x] = acc;
    __syncthreads();
    float v = __shfl_down_sync(0xffffffff, acc, 1);
    if (t % 5 == 0) return;
    if (t < n) out[t] = s[63 - threadIdx.x] + v;
}

__global__ void guarded(unsigned* out, const unsigned* in, int n) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned x = in[t % n], y = in[(t + 1) % n], both;
    // a guarded write keeps the old value where the guard is false; a temporary written between
    // the old value's definition and the guarded write must not take the old value's storage
    asm("{ .reg .u32 tmp; .reg .pred p; add.u32 tmp, %1, 7; setp.ne.u32 p, %2, 0; @p mov.u32 %0, tmp; }"
        : "+r"(x) : "r"(y), "r"(t & 1));
    // the predicate c dies where p and q are born: p must not take its storage before q reads it
    asm("{ .reg .pred c, p, q; setp.ne.u32 c, %1, 0; setp.lt.and.u32 p|q, %2, 9, c; selp.u32 %0, 1, 2, q; }"
        : "=r"(both) : "r"(t & 2), "r"(t % 16));
    out[t] = x * 4 + both;
}
'''


PLAN_STORAGE = registers.plan_storage


def _everything_own(kernel):
    plan = PLAN_STORAGE(kernel)
    return registers.Storage(key={r: (kind, "own", r) for r, (kind, *_) in plan.key.items()},
                             dedicated=set(plan.key))


def _outcome(run_it):
    out, run = run_it()
    return (out.tobytes(), run.metrics, [str(r) for r in run.races], [str(w) for w in run.warnings])


CASES = [("padded_32x8", np.float32, (100, 130)), ("vec", np.float16, (100, 130)), ("warp", np.uint8, (70, 90)),
         ("fast", np.float64, (33, 65)), ("sector", np.float16, (1, 300)), ("swizzle", np.float32, (64, 64))]


@pytest.mark.parametrize("key,dtype,shape", CASES, ids=[f"{k}-{np.dtype(d).name}" for k, d, _ in CASES])
def test_registers_sharing_storage_change_nothing_in_course_kernels(key, dtype, shape, monkeypatch):
    t = transposes.kernel(key, dtype)
    a = random_matrix(*shape, dtype)
    shared = _outcome(lambda: t.simulate(a))
    t.function.kernel.analyses.pop("register storage", None)
    monkeypatch.setattr(registers, "plan_storage", _everything_own)
    own = _outcome(lambda: t.simulate(a))
    t.function.kernel.analyses.pop("register storage", None)
    assert shared == own


@pytest.mark.parametrize("name,dtype", [("divergent", np.float32), ("guarded", np.uint32)])
def test_registers_sharing_storage_change_nothing_in_divergent_code(name, dtype, monkeypatch):
    fn = cl.RawModule(code=DIVERGENT).get_function(name)
    a = random_matrix(1, 200, dtype)[0]

    def run_it():
        out = poisoned(256, dtype)
        return out, fn.simulate(4, 64, (out, a, np.int32(200)))
    shared = _outcome(run_it)
    if name == "guarded":
        t = np.arange(256)
        x = np.where(t & 1, a[(t + 1) % 200] + 7, a[t % 200]).astype(np.uint32)
        both = np.where((t % 16 >= 9) & (t & 2 != 0), 1, 2)
        assert np.frombuffer(shared[0], np.uint32).tolist() == (x * 4 + both).astype(np.uint32).tolist()
    fn.kernel.analyses.pop("register storage", None)
    monkeypatch.setattr(registers, "plan_storage", _everything_own)
    assert _outcome(run_it) == shared
    fn.kernel.analyses.pop("register storage", None)
