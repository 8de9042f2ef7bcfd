"""What a kernel spends (course_lib/sim/results/spend.py): every instruction a warp executes, counted once per
warp with an active thread, and every sector and wavefront, the copies' included; the order a ranking uses."""
import numpy as np

import course_lib as cl
from course_lib.sim.results.spend import Spend, rank_key, spend

BRANCH = r"""
extern "C" __global__ void lane0(float* out)
{
    if (threadIdx.x == 0)
        out[blockIdx.x] = 1.0f;
}
"""


def _warp_counts(blocks, threads):
    fn = cl.RawModule(code=BRANCH).get_function("lane0")
    run = fn.simulate((blocks,), (threads,), (np.zeros(blocks, np.float32),), echo=False, progress=False)
    executed = sum(1 for ins in fn.kernel.instructions)                   # straight through for lane 0
    return run.warp_instructions, executed


def test_instructions_are_counted_once_per_warp_with_an_active_thread():
    one, n = _warp_counts(1, 32)
    assert 0 < one <= n
    two_warps, _ = _warp_counts(1, 48)          # the second warp (16 threads) skips the store's instructions
    assert one < two_warps < 2 * one
    assert _warp_counts(3, 48)[0] == 3 * two_warps


def test_spend_holds_every_sector_wavefront_and_instruction():
    sim = cl.Simulator()
    tile = sim.run("padded_32x8", shape=(64, 64)).sim
    s = spend(tile)
    assert (s.sectors, s.wavefronts) == (2 * 64 * 64 * 4 // 32, 2 * 64 * 64 * 4 // 128) and s.instructions == tile.warp_instructions
    copy = spend(sim.run("tma_copy", shape=(64, 64)).sim)          # the TMA: no load/store-unit counters at all
    assert copy.sectors == 2 * 64 * 64 * 4 // 32 and copy.wavefronts == 2 * 64 * 64 * 4 // 128
    assert spend(sim.run("async", STAGES=2, shape=(64, 64))).wavefronts == 2 * 64 * 64 * 4 // 128


def test_a_ranking_orders_sectors_then_wavefronts_then_instructions():
    a, b, c = Spend(256, 64, 900), Spend(256, 32, 2000), Spend(200, 500, 5000)
    assert sorted([a, b, c], key=rank_key) == [c, b, a]
    assert a.per(2048) == {"sectors": 128.0, "wavefronts": 32.0, "instructions": 450.0}
