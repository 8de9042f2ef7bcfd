"""What the simulator records for a checker: owners (which block touched which element), shared loads
scrambled, atomics counted apart from loads and stores and applied at once where addresses differ."""
import numpy as np

from course_lib import sim
from course_lib.notebook import magic

SRC = """
__global__ void k(float* out, const float* in, int n, int m)
{
    __shared__ float s[64];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x] = in[i];
    __syncthreads();
    out[i] = s[threadIdx.x];
    if (blockIdx.x == 1 && threadIdx.x == 0) out[0] = in[5];    // block 1 also writes block 0's element
}
"""


def _run(src, n=256, **options):
    fn = magic.compile_cell("", src)[1]["k"]
    a = np.arange(1, n + 1, dtype=np.float32)
    out = np.zeros_like(a)
    run = sim.simulate(fn, fn.check_launch((n // 64,), (64,), (out, a, np.int32(n), np.int32(1))), echo=False,
                       progress=None, **options)
    return run, out, a


def test_owners_name_the_blocks_that_read_and_wrote_each_element():
    run, out, a = _run(SRC, owners=True)
    o, i = run.owners[0], run.owners[1]
    assert (o.name, i.name) == ("out", "in") and o.write_lo.size == 256
    assert (o.write_lo[0], o.write_hi[0]) == (0, 1) and (o.write_lo[64], o.write_hi[64]) == (1, 1)
    assert (i.read_lo[5], i.read_hi[5]) == (0, 1) and (i.read_lo[200], i.read_hi[200]) == (3, 3)
    assert (o.read_hi == -1).all() and (i.write_hi == -1).all()
    # the writers' warps, numbered over the launch (2 warps a block): element 0 by warps 0 and 2 (block 1's)
    assert (o.warp_lo[0], o.warp_hi[0]) == (0, 2) and (o.warp_lo[100], o.warp_hi[100]) == (3, 3)
    assert (i.warp_hi == -1).all()                          # reads record no warp
    assert _run(SRC)[0].owners is None                      # off unless asked for


def test_scrambled_shared_loads_change_exactly_what_passed_through_shared_memory():
    run, out, a = _run(SRC, scramble_shared=0xA5)
    scrambled = (a.view(np.uint32) ^ np.uint32(0xA5A5A5A5)).view(np.float32)
    assert np.array_equal(out[1:].view(np.uint32), scrambled[1:].view(np.uint32)) and out[0] == a[5]


def test_atomics_are_counted_apart_and_applied_at_once():
    src = """
__global__ void k(float* out, const float* in, int n, int m)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    atomicExch(&out[i], atomicAdd(const_cast<float*>(&in[i]), 1.0f));
}
"""
    run, out, a = _run(src, n=4096)
    assert np.array_equal(out, np.arange(1, 4097, dtype=np.float32))
    assert [(r["op"], r["space"], r["requests"], r["sectors"], r["bytes"]) for r in run.atomics] == \
        [("atom", "global", 128, 512, 16384)] * 2
    assert not run.instructions and not any(run.metrics.values())      # ncu's ld/st metrics leave them out
