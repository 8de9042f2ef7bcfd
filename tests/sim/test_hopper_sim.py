"""Issue 19's kernels in the simulator (cp.async, TMA, mbarrier, ldmatrix/stmatrix, shuffles), run the
way a student runs them (Function.simulate):

- every new kernel, dtype and shape moves every element right (random data, poisoned output);
  (what they count against the H100's ncu: tests/sim/test_hardware_agreement.py)
- the PTX of NVRTC 12.9 and 13.0 (tests/sim/hopper_ptx) runs the three async-copy forms of CUDA C++
  (cuda_pipeline.h, cuda::pipeline, cuda::barrier + cuda::memcpy_async) right;
- misuse is named: ldmatrix in a split warp, an mbarrier used before init, a tensor map argument
  that is not a TensorMap.
"""
import gzip
import json
from pathlib import Path

import numpy as np
import pytest

import course_lib as cl
import hopper_launches as hl
from course_lib.sim.movement.tma import TensorMap

ROOT = Path(__file__).resolve().parents[2]
FIX = Path(__file__).resolve().parent / "hopper_ptx"
RUN2 = ROOT / "benchmarks" / "results" / "h100_2026-11-26_hopper" / "run2_ncu.json"


def _simulate(fn, grid, block, args, **options):
    return fn.simulate(grid, block, args, echo=False, progress=False, **options)


def launch(key, dtype, rows, cols, params=None, seed=0):
    fn, grid, block, args, a, out, shared = hl.kernel_launch(key, dtype, rows, cols, params, seed)
    return fn, grid, block, args, a, out


DTYPES = (np.float32, np.float64, np.float16, np.uint8)
CASES = [("tma_tile", {}), ("tma_tile", dict(SW=0)), ("tma_copy", dict(SW=64)), ("tma_both", dict(SW=64)),
         ("tma_pipe", dict(STAGES=3, ORDER=1)), ("tma_wide", dict(ORDER=1)), ("tma_out", dict(WARPS=2, NB=1)),
         ("async_tile", {}), ("async_tile", dict(STAGES=1)), ("shuffle", {}), ("ldsm", {})]


def _every_element(key, params, dtypes, shapes):
    hl.prepare([(key, dt, params) for dt in dtypes if not hl.hc.applies(key, 96, 160, dt) or key == "async_tile"])
    done = 0
    for dtype in dtypes:
        for rows, cols in shapes:
            if hl.hc.applies(key, rows, cols, dtype) or (key == "tma_both" and rows > 100):   # tiny boxes: many blocks
                continue
            fn, grid, block, args, a, out = launch(key, dtype, rows, cols, params, seed=rows + cols)
            if key == "tma_pipe":
                grid = (3,)      # 3 blocks: each walks several boxes through the ring
            run = _simulate(fn, grid, block, args)
            want = a if key == "tma_copy" else a.T
            assert np.array_equal(out.view(np.uint8), np.ascontiguousarray(want).view(np.uint8)), (np.dtype(dtype), rows, cols)
            assert not run.races and not [w for w in run.warnings if w.kind == "uninitialized"]
            if key.startswith("tma"):
                assert [w.kind for w in run.warnings if w.kind == "tma"] == ["tma"]
            done += 1
    return done


@pytest.mark.parametrize("key,params", CASES, ids=[f"{k}{p or ''}" for k, p in CASES])
def test_new_kernels_move_every_element(key, params):
    dtype = np.float16 if key == "ldsm" else np.float32
    assert _every_element(key, params, [dtype], [(96, 160)]) == 1


@pytest.mark.slow
@pytest.mark.parametrize("key,params", CASES, ids=[f"{k}{p or ''}" for k, p in CASES])
def test_new_kernels_move_every_element_of_every_dtype_and_shape(key, params):
    assert _every_element(key, params, DTYPES, ((96, 160), (100, 130), (1, 4097), (208, 272))) >= 2


@pytest.mark.parametrize("major", [12, 13])
def test_async_copy_forms_from_both_nvrtc_generations(major):
    ptx = gzip.decompress((FIX / f"nvrtc{major}" / "pipeline_forms.ptx.gz").read_bytes()).decode()
    mod = cl.RawModule.from_ptx(ptx, code=(FIX / "src" / "pipeline_forms.cu").read_text(), filename="pipeline_forms.cu")
    rng = np.random.default_rng(major)
    for name, n in (("primitives", 128), ("pipeline", 128), ("block_copy", 512)):
        a = rng.random(n).astype(np.float32)
        out = np.zeros_like(a)
        run = _simulate(mod.get_function(name), (1,), (128,), (out, a))
        want = a[::-1] if name != "block_copy" else a.reshape(128, 4)[::-1].reshape(-1)
        assert np.array_equal(out, want), name
        assert not run.races
    assert run.tma_counts["l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld.sum"] == 2048


@pytest.mark.parametrize("major", [12, 13])
def test_tma_ptx_from_both_nvrtc_generations(major):
    ptx = gzip.decompress((FIX / f"nvrtc{major}" / "tma.ptx.gz").read_bytes()).decode()
    manifest = json.loads((FIX / "manifest.json").read_text())["tma.cu"][f"nvrtc{major}"]["lowered"]
    mod = cl.RawModule.from_ptx(ptx, code=(FIX / "src" / "tma.cu").read_text(), filename="tma.cu")
    fn = mod.get_function(manifest["tma_tile<unsigned short, 64, 4, 128>"])
    a = np.random.default_rng(3).integers(1, 60000, (96, 160)).astype(np.uint16)
    out = np.zeros((160, 96), np.uint16)
    _simulate(fn, (3, 2), (128,), (out, TensorMap(a, box=(64, 64), swizzle=128), 96, 160))
    assert np.array_equal(out, a.T)


LDSM_SPLIT = r'''
__global__ void split(unsigned* out) {
    __shared__ alignas(16) unsigned short s[512];
    for (int i = threadIdx.x; i < 512; i += blockDim.x) s[i] = i;
    __syncthreads();
    unsigned r = 0, a = (unsigned)__cvta_generic_to_shared(&s[(threadIdx.x % 8) * 8]);
    if (threadIdx.x < 16)
        asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(r) : "r"(a));
    out[threadIdx.x] = r;
}
'''
BEFORE_INIT = r'''
#include <cuda/barrier>
__global__ void early(float* out) {
#pragma nv_diag_suppress static_var_with_dynamic_init
    __shared__ cuda::barrier<cuda::thread_scope_block> bar;
    bar.arrive_and_wait();                      // nobody called init(&bar, ...)
    out[threadIdx.x] = 1;
}
'''


def test_misuse_is_named():
    fn = cl.RawModule(code=LDSM_SPLIT, filename="split.cu").get_function("split")
    with pytest.raises(cl.KernelError, match="warp-wide") as err:
        _simulate(fn, (1,), (32,), (np.zeros(32, np.uint32),))
    assert err.value.line == 8
    fn = cl.RawModule(code=BEFORE_INIT, filename="early.cu").get_function("early")
    with pytest.raises(cl.BarrierError, match="before mbarrier.init"):
        _simulate(fn, (1,), (32,), (np.zeros(32, np.float32),))
    fn, grid, block, args, a, out = launch("tma_tile", np.float32, 96, 160)
    with pytest.raises(cl.ArgumentError, match="TensorMap"):
        _simulate(fn, grid, block, (out, a, 96, 160))


@pytest.mark.parametrize("key", sorted(k for k, s in cl.transposes.SPECS.items() if s.lesson == "12"))
def test_catalog_kernels_launch_as_the_transpose_wrapper_says(key):
    """transposes.kernel(key): its config and its args (TensorMaps built over in and out) move every element."""
    dtype = np.float16 if key == "ldsm" else np.float32
    t = cl.transposes.kernel(key, dtype)
    a = cl.transposes.random_matrix(96, 160, dtype)
    out = cl.transposes.poisoned(t.out_shape(96, 160), dtype)
    grid, block = t.config(96, 160)
    _simulate(t.function, grid, block, t.args(out, a), shared_mem=t.shared_mem(96, 160))
    assert np.array_equal(out, t.expected(a))
    if key.startswith("tma") or key == "ldsm":
        with pytest.raises(cl.ArgumentError, match="16 bytes|multiple of 8"):
            t.args(np.zeros((1030, 1000), dtype), np.zeros((1000, 1030), dtype))


EARLY_CP = r'''
#include <cuda_pipeline.h>
__global__ void early(float* out, const float* in) {
    __shared__ float s[256];
    __pipeline_memcpy_async(&s[threadIdx.x], &in[threadIdx.x], sizeof(float));
    __pipeline_commit();
    float v = s[threadIdx.x];                 // before the wait
    __pipeline_wait_prior(0);
    out[threadIdx.x] = v + s[threadIdx.x];
}
'''
EARLY_TMA = r'''
#include <cuda.h>
#include <cuda/barrier>
using barrier = cuda::barrier<cuda::thread_scope_block>;
namespace cde = cuda::device::experimental;
__global__ void early_tma(float* out, const __grid_constant__ CUtensorMap map) {
    __shared__ alignas(128) float tile[32][32];
#pragma nv_diag_suppress static_var_with_dynamic_init
    __shared__ barrier bar;
    if (threadIdx.x == 0) { init(&bar, blockDim.x); cde::fence_proxy_async_shared_cta(); }
    __syncthreads();
    barrier::arrival_token token;
    if (threadIdx.x == 0) {
        cde::cp_async_bulk_tensor_2d_global_to_shared(&tile, &map, 0, 0, bar);
        token = cuda::device::barrier_arrive_tx(bar, 1, sizeof(tile));
    } else token = bar.arrive();
    float early = tile[threadIdx.x][0];          // before bar.wait
    bar.wait(std::move(token));
    out[threadIdx.x] = early + tile[threadIdx.x][1];
}
'''
NO_SYNC = r'''
#include <cuda_pipeline.h>
__global__ void no_sync(float* out, const float* in) {
    __shared__ float s[256];
    __pipeline_memcpy_async(&s[threadIdx.x], &in[threadIdx.x], sizeof(float));
    __pipeline_commit();
    __pipeline_wait_prior(0);
    out[threadIdx.x] = s[255 - threadIdx.x];      // another thread's copy, no __syncthreads
}
'''


def test_reading_a_copy_before_its_wait_is_a_race_named_with_both_lines():
    fn = cl.RawModule(code=EARLY_CP, filename="early.cu").get_function("early")
    run = _simulate(fn, (1,), (256,), (np.zeros(256, np.float32), np.ones(256, np.float32)))
    assert [(r.copy, r.lines, r.count) for r in run.races] == [("cp.async", (5, 7), 256)]
    assert "__pipeline_wait_prior" in run.races[0].hint
    fn = cl.RawModule(code=EARLY_TMA, filename="early_tma.cu").get_function("early_tma")
    run = _simulate(fn, (1,), (32,), (np.zeros(32, np.float32), TensorMap(np.ones((32, 32), np.float32), box=(32, 32))))
    assert [(r.copy, r.lines) for r in run.races] == [("TMA", (14, 17))]
    assert "mbarrier" in str(run.races[0])


def test_a_finished_cp_async_is_its_own_threads_write():
    fn = cl.RawModule(code=NO_SYNC, filename="no_sync.cu").get_function("no_sync")
    run = _simulate(fn, (1,), (256,), (np.zeros(256, np.float32), np.ones(256, np.float32)))
    assert [(r.kind, r.lines) for r in run.races] == [("RAW", (5, 8))]


@pytest.mark.parametrize("dtype", [np.float32] + [pytest.param(d, marks=pytest.mark.slow) for d in (np.uint8, np.uint16, np.float64)])
def test_band_moves_whole_bands_and_partial_ones(dtype):
    """One bulk copy per band of whole rows where the band is whole 16-byte chunks, the fallback copy
    (cp.async, or element copies) where it is not, and pieces stored as one vector where out's rows allow."""
    t = cl.transposes.kernel("band", dtype)
    for rows, cols in ((96, 130), (37, 50), (1, 300), (300, 1)):
        a = cl.transposes.random_matrix(rows, cols, dtype)
        out = cl.transposes.poisoned(t.out_shape(rows, cols), dtype)
        grid, block = t.config(rows, cols)
        run = _simulate(t.function, grid, block, t.args(out, a), shared_mem=t.shared_mem(rows, cols))
        assert np.array_equal(out, t.expected(a)), (rows, cols)
        assert not run.races
    assert run.tma_counts or rows == 300          # the last shape: 1-element rows, no whole chunks


NEGATIVE_STORE = r'''
#include <cuda.h>
#include <cuda/barrier>
namespace cde = cuda::device::experimental;
__global__ void negative_store(const __grid_constant__ CUtensorMap map) {
    __shared__ alignas(128) float box[32][32];
    for (int i = threadIdx.x; i < 1024; i += blockDim.x) box[i / 32][i % 32] = i;
    cde::fence_proxy_async_shared_cta();
    __syncthreads();
    if (threadIdx.x == 0) {
        cde::cp_async_bulk_tensor_2d_shared_to_global(&map, -16, -3, &box);
        cde::cp_async_bulk_commit_group();
        cde::cp_async_bulk_wait_group_read<0>();
    }
}
'''


def test_a_tma_store_at_negative_coordinates_stops_the_kernel_as_on_an_h100():
    """Run 3 (benchmarks/results/h100_2026-11-26_hopper/run3_negative.json): loads at negative
    coordinates fill with zeros (the simulator's boxes match), the store faulted."""
    fn = cl.RawModule(code=NEGATIVE_STORE, filename="negative.cu").get_function("negative_store")
    out = np.zeros((40, 32), np.float32)
    with pytest.raises(cl.KernelError, match="negative coordinate") as err:
        _simulate(fn, (1,), (128,), (TensorMap(out, box=(32, 32)),))
    assert err.value.line == 11                 # the store's line (the source starts with a newline)
    measured = json.loads((RUN2.parent / "run3_negative.json").read_text())
    assert [("error" in v) for v in measured.values()] == [False, True, False, False]


@pytest.mark.parametrize("key, shape, noted", [("tma_both", (64, 64), True), ("tma_out", (64, 64), True),
                                               ("tma_both", (16, 16), False), ("tma", (64, 64), False)])
def test_the_result_says_where_ncu_counts_more_than_the_instructions(key, shape, noted):
    """TMA stores of one block and shared accesses of another on the same SM: extra, timing-dependent
    wavefronts in ncu (tests/sim/test_hardware_agreement.py replays the H100 probe). One block, or a
    kernel without TMA stores, has nothing to note."""
    from course_lib.sim.results.async_result import SHARED_BY_BLOCKS_NOTE
    t = cl.transposes.kernel(key, np.float64)
    inp, out = cl.transposes.random_matrix(*shape, t.dtype, seed=3), cl.transposes.poisoned(t.out_shape(*shape), t.dtype)
    grid, block = t.config(*shape)
    run = t.function.simulate(grid, block, t.args(out, inp), shared_mem=t.shared_mem(*shape), echo=False)
    assert np.array_equal(out, inp.T)
    assert (SHARED_BY_BLOCKS_NOTE in [w.message for w in run.warnings]) == noted
