"""Every rule and table entry of shared/docs/memory-rules.md, through real kernels simulated end to end.

Global memory: requests and 32-byte sectors for 4/8/16-byte accesses (unit stride, offset by
one element, stride 2, stride 32, all one address), loads and stores. Shared memory: the
wavefront/conflict tables for 4/8/16-byte loads and stores, rule 2 (pairs sharing an address
merge phases, loads only) and its pinning case, the classic [32][32] vs [32][33] tile. Then
what the rules say about warps: partial last warps, predicated-off threads, whole warps with
no active thread, and x-fastest numbering in 2-D and 3-D blocks. Finally an independent Python
model of the rules against the simulator on random address patterns and activity masks.
"""
import numpy as np
import pytest

import course_lib as cl

M = {k: f"l1tex__{v}" for k, v in {
    "g_ld_req": "t_requests_pipe_lsu_mem_global_op_ld.sum", "g_st_req": "t_requests_pipe_lsu_mem_global_op_st.sum",
    "g_ld_sec": "t_sectors_pipe_lsu_mem_global_op_ld.sum", "g_st_sec": "t_sectors_pipe_lsu_mem_global_op_st.sum",
    "s_ld_wf": "data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "s_st_wf": "data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "s_ld_bc": "data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "s_st_bc": "data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
}.items()}

SRC = r'''
#define TID (threadIdx.x + threadIdx.y * blockDim.x + threadIdx.z * blockDim.x * blockDim.y)

template <typename T> __global__ void g_load(T* out, const T* in, int stride, int offset)
{
    int t = TID;
    out[t] = in[offset + t * stride];
}

template <typename T> __global__ void g_store(T* out, const T* in, int stride, int offset)
{
    int t = TID;
    out[offset + t * stride] = in[t];
}

template <typename T> __global__ void g_load_if(T* out, const T* in, int every, int below)
{
    int t = TID;
    if (t % every == 0 && t < below)
        out[t] = in[t];
}

__global__ void g_load_3d(float* out, const float* in, int row, int plane)
{
    out[TID] = in[threadIdx.z * plane + threadIdx.y * row + threadIdx.x];
}

template <typename T> __global__ void s_load(T* out, int stride)
{
    __shared__ T s[1100];
    int t = TID;
    for (int i = t; i < 1100; i += blockDim.x * blockDim.y * blockDim.z) s[i] = T{};
    __syncthreads();
    out[t] = s[t * stride];
}

template <typename T> __global__ void s_store(T* out, const T* in, int stride)
{
    __shared__ T s[1100];
    int t = TID;
    s[t * stride] = in[t];
    __syncthreads();
    out[t] = s[t];
}

template <typename T> __global__ void s_load_if(T* out, int stride, int every, int below)
{
    __shared__ T s[1100];
    int t = TID;
    for (int i = t; i < 1100; i += blockDim.x * blockDim.y * blockDim.z) s[i] = T{};
    __syncthreads();
    if (t % every == 0 && t < below)
        out[t] = s[t * stride];
}

template <typename T> __global__ void s_pin_load(T* out)
{
    __shared__ T s[64];
    int t = TID;
    if (t < 64) s[t] = T{};
    __syncthreads();
    out[t] = s[(t & 1) ? 128 / sizeof(T) : 0];       // even lanes: byte 0, odd lanes: byte 128
}

template <typename T> __global__ void s_pin_store(T* out, const T* in)
{
    __shared__ T s[64];
    int t = TID;
    s[(t & 1) ? 128 / sizeof(T) : 0] = in[0];
    __syncthreads();
    if (t == 0) out[0] = s[0];
}

template <int PAD> __global__ void tile_column(float* out, const float* in)
{
    __shared__ float tile[32][32 + PAD];
    int x = threadIdx.x, y = threadIdx.y;
    for (int j = y; j < 32; j += blockDim.y) tile[j][x] = in[j * 32 + x];
    __syncthreads();
    for (int j = y; j < 32; j += blockDim.y) out[j * 32 + x] = tile[x][j];
}

template <typename T> __global__ void s_gather(T* out, const int* idx, const int* act)
{
    __shared__ T s[2048];
    int t = TID;
    for (int i = t; i < 2048; i += blockDim.x) s[i] = T{};
    __syncthreads();
    int k = idx[t];
    bool on = act[t];
    if (on)
        out[t] = s[k];                              // SHARED_GATHER
}

template <typename T> __global__ void s_scatter(T* out, const int* idx, const int* act)
{
    __shared__ T s[2048];
    int t = TID;
    int k = idx[t];
    bool on = act[t];
    if (on)
        s[k] = T{};                                 // SCATTER_STORE
    __syncthreads();
    out[t] = s[t];
}

template <typename T> __global__ void g_gather(T* out, const T* in, const int* idx, const int* act)
{
    int t = TID;
    int k = idx[t];
    bool on = act[t];
    if (on)
        out[t] = in[k];                             // GLOBAL_GATHER
}
'''
TYPES = {4: ("int", np.int32, 1), 8: ("long long", np.int64, 1), 16: ("int4", np.int32, 4)}


@pytest.fixture(scope="module")
def mod():
    return cl.RawModule(code=SRC, options=("-std=c++17",), filename="rules.cu")


def simulate(mod, name, block, *args, grid=(1, 1, 1)):
    return mod.get_function(name).simulate(grid, block, args, check_races=False, echo=False)


def buf(width, n):
    _, dt, k = TYPES[width]
    return np.arange(n * k, dtype=dt) % 97 + 1


# ----------------------------------------------------------------------------- global memory

GLOBAL_TABLE = {  # bytes/thread -> sectors per request for (unit stride, offset 1, stride 2, stride 32, same address)
    4: (4, 5, 8, 32, 1), 8: (8, 9, 16, 32, 1), 16: (16, 17, 32, 32, 1)}
PATTERNS = [(1, 0), (1, 1), (2, 0), (32, 0), (0, 0)]   # (stride, offset) in elements


@pytest.mark.parametrize("width", [4, 8, 16])
@pytest.mark.parametrize("which", range(5), ids=["unit", "offset1", "stride2", "stride32", "same"])
def test_global_sectors_table(mod, width, which):
    stride, offset = PATTERNS[which]
    ctype = TYPES[width][0]
    big = buf(width, 32 * 32 + 2)
    run = simulate(mod, f"g_load<{ctype}>", (32, 1, 1), buf(width, 32) * 0, big, np.int32(stride), np.int32(offset))
    assert run.metrics[M["g_ld_req"]] == 1
    assert run.metrics[M["g_ld_sec"]] == GLOBAL_TABLE[width][which]
    run = simulate(mod, f"g_store<{ctype}>", (32, 1, 1), big.copy(), buf(width, 32), np.int32(stride), np.int32(offset))
    assert run.metrics[M["g_st_req"]] == 1                      # the same rule for stores
    assert run.metrics[M["g_st_sec"]] == GLOBAL_TABLE[width][which]


def test_global_partial_last_warp(mod):
    # 48 threads: warp 0 has 32 (4 sectors), warp 1 has 16 (2 sectors); 2 requests
    run = simulate(mod, "g_load<int>", (48, 1, 1), buf(4, 48), buf(4, 48), np.int32(1), np.int32(0))
    assert (run.metrics[M["g_ld_req"]], run.metrics[M["g_ld_sec"]]) == (2, 6)
    run = simulate(mod, "g_load<int4>", (40, 1, 1), buf(16, 40), buf(16, 40), np.int32(1), np.int32(0))
    assert (run.metrics[M["g_ld_req"]], run.metrics[M["g_ld_sec"]]) == (2, 16 + 4)


def test_global_inactive_threads_take_no_part(mod):
    # every other thread, 4 bytes: 16 threads spread over 128 bytes -> still 4 sectors
    run = simulate(mod, "g_load_if<int>", (32, 1, 1), buf(4, 32), buf(4, 32), np.int32(2), np.int32(32))
    assert (run.metrics[M["g_ld_req"]], run.metrics[M["g_ld_sec"]]) == (1, 4)
    # threads 0..7 only: one sector
    run = simulate(mod, "g_load_if<int>", (32, 1, 1), buf(4, 32), buf(4, 32), np.int32(1), np.int32(8))
    assert (run.metrics[M["g_ld_req"]], run.metrics[M["g_ld_sec"]]) == (1, 1)
    # 96 threads, only the first warp active: warps with no active thread make no request
    run = simulate(mod, "g_load_if<int>", (96, 1, 1), buf(4, 96), buf(4, 96), np.int32(1), np.int32(32))
    assert (run.metrics[M["g_ld_req"]], run.metrics[M["g_ld_sec"]]) == (1, 4)
    assert run.metrics[M["g_st_req"]] == 1


@pytest.mark.parametrize("block, expected", [
    ((16, 4, 1), (2, 8)),      # a warp = 2 rows of 16 floats = 2 x 2 sectors
    ((4, 4, 4), (2, 16)),      # a warp = 2 planes x 4 rows of 4 floats = 8 separate 16-byte pieces
    ((32, 2, 1), (2, 8)),      # a warp = one full row
])
def test_warps_are_numbered_x_fastest(mod, block, expected):
    row, plane = 1024, 1024 * 8       # rows and planes far apart: every piece is its own sector
    n = block[0] * block[1] * block[2]
    run = simulate(mod, "g_load_3d", block, np.zeros(n, np.float32), np.ones(plane * 4, np.float32),
                   np.int32(row), np.int32(plane))
    assert (run.metrics[M["g_ld_req"]], run.metrics[M["g_ld_sec"]]) == expected


# ----------------------------------------------------------------------------- shared memory

STRIDES = (1, 2, 4, 8, 16, 32, 33, 0)
SHARED_LOADS = {
    4: ((1, 0), (2, 1), (4, 3), (8, 7), (16, 15), (32, 31), (1, 0), (1, 0)),
    8: ((2, 0), (4, 2), (8, 6), (16, 14), (32, 30), (32, 30), (2, 0), (1, 0)),
    16: ((4, 0), (8, 4), (16, 12), (32, 28), (32, 28), (32, 28), (4, 0), (2, 0)),
}
STORE_SAME_ADDRESS = {4: (1, 0), 8: (2, 0), 16: (4, 0)}     # rule 2 never applies to stores


@pytest.mark.parametrize("width", [4, 8, 16])
@pytest.mark.parametrize("stride", STRIDES)
def test_shared_wavefront_table(mod, width, stride):
    ctype = TYPES[width][0]
    exp_ld = SHARED_LOADS[width][STRIDES.index(stride)]
    run = simulate(mod, f"s_load<{ctype}>", (32, 1, 1), buf(width, 32), np.int32(stride))
    assert (run.metrics[M["s_ld_wf"]], run.metrics[M["s_ld_bc"]]) == exp_ld
    exp_st = STORE_SAME_ADDRESS[width] if stride == 0 else exp_ld
    run = simulate(mod, f"s_store<{ctype}>", (32, 1, 1), buf(width, 32), buf(width, 32), np.int32(stride))
    assert (run.metrics[M["s_st_wf"]], run.metrics[M["s_st_bc"]]) == exp_st


@pytest.mark.parametrize("width, load, store", [(8, (2, 1), (4, 2)), (16, (4, 2), (8, 4))])
def test_rule_2_pinning_case(mod, width, load, store):
    """Even lanes read byte 0, odd lanes byte 128: pairs t, t^1 differ, t, t^2 agree."""
    ctype = TYPES[width][0]
    run = simulate(mod, f"s_pin_load<{ctype}>", (32, 1, 1), buf(width, 32))
    assert (run.metrics[M["s_ld_wf"]], run.metrics[M["s_ld_bc"]]) == load
    run = simulate(mod, f"s_pin_store<{ctype}>", (32, 1, 1), buf(width, 1), buf(width, 1))
    assert (run.metrics[M["s_st_wf"]], run.metrics[M["s_st_bc"]]) == store


def test_classic_transpose_tile(mod):
    a = np.arange(1024, dtype=np.float32)
    run = simulate(mod, "tile_column<0>", (32, 8, 1), np.zeros(1024, np.float32), a)
    assert run.metrics[M["s_ld_wf"]] == 32 * 32 and run.metrics[M["s_ld_bc"]] == 31 * 32   # 32 instructions
    run = simulate(mod, "tile_column<1>", (32, 8, 1), np.zeros(1024, np.float32), a)
    assert run.metrics[M["s_ld_wf"]] == 32 and run.metrics[M["s_ld_bc"]] == 0


def test_shared_partial_warps_and_empty_phases(mod):
    # 48 threads, 4-byte stride 1: one wavefront per warp
    run = simulate(mod, "s_load<int>", (48, 1, 1), buf(4, 48), np.int32(1))
    assert (run.metrics[M["s_ld_wf"]], run.metrics[M["s_ld_bc"]]) == (2, 0)
    # 8-byte loads, threads 0..15 only: the second half-warp phase is empty and costs nothing
    run = simulate(mod, "s_load_if<long long>", (32, 1, 1), buf(8, 32), np.int32(1), np.int32(1), np.int32(16))
    assert (run.metrics[M["s_ld_wf"]], run.metrics[M["s_ld_bc"]]) == (1, 0)
    # even threads, 4-byte stride 2: words 0, 4, .., 60 on 8 banks, 2 per bank -> 2 wavefronts
    run = simulate(mod, "s_load_if<int>", (32, 1, 1), buf(4, 32), np.int32(2), np.int32(2), np.int32(32))
    assert (run.metrics[M["s_ld_wf"]], run.metrics[M["s_ld_bc"]]) == (2, 1)
    # a warp with no active thread costs nothing: 64 threads, only warp 0 active
    run = simulate(mod, "s_load_if<int>", (64, 1, 1), buf(4, 64), np.int32(32), np.int32(1), np.int32(32))
    assert (run.metrics[M["s_ld_wf"]], run.metrics[M["s_ld_bc"]]) == (32, 31)


# ----------------------------------------------------------------------------- an independent model

def model_shared(addrs, active, width, is_load):
    """memory-rules.md, shared memory rules 1-4, for one warp (addresses in bytes), as made
    precise by the H100 probe (benchmarks/ncu_shared_probe.py, 738 patterns): in rule 2 an
    inactive partner does not prevent the merge, and a phase's ideal is ceil(words / 32)."""
    phases = 1 if width <= 4 else (2 if width == 8 else 4)
    if is_load and phases > 1:
        for x in (1, 2):
            if all(not active[t] or not active[t ^ x] or addrs[t ^ x] == addrs[t] for t in range(32)):
                phases //= 2
                break
    size = 32 // phases
    total = ideal = 0
    for ph in range(phases):
        lanes = [t for t in range(ph * size, (ph + 1) * size) if active[t]]
        if not lanes:
            continue
        banks = {}
        for t in lanes:
            for k in range(max(1, width // 4)):
                word = addrs[t] // 4 + k
                banks.setdefault(word % 32, set()).add(word)
        total += max(len(words) for words in banks.values())
        ideal += -(-sum(len(w) for w in banks.values()) // 32)
    return total, total - ideal


def model_global(addrs, active, width):
    sectors = {(a + k) >> 5 for a, on in zip(addrs, active) if on for k in range(width)}
    return int(any(active)), len(sectors)


def patterns(rng, width, count=12):
    """Index patterns (in elements) that stress the rules: random, few distinct words, pairs."""
    limit = 2048 * 4 // width
    out = []
    for i in range(count):
        kind = i % 4
        if kind == 0:
            idx = rng.integers(0, limit, 32)
        elif kind == 1:
            idx = rng.choice(rng.integers(0, limit, 4), 32)          # heavy broadcast/multicast
        elif kind == 2:
            idx = np.repeat(rng.integers(0, limit, 16), 2)            # t and t^1 share: rule 2
        else:
            idx = np.tile(np.repeat(rng.integers(0, limit, 2), 2), 8) if i % 8 == 3 else \
                np.arange(32) * rng.integers(1, 40) % limit         # t, t^2 share / strided
        act = rng.random(32) < (1.0 if i % 3 == 0 else 0.7)
        out.append((idx.astype(np.int32), act.astype(np.int32)))
    return out


def line_metrics(run, marker):
    line = next(n for n, text in enumerate(SRC.splitlines(), 1) if marker in text)
    return run.by_line[line]


@pytest.mark.parametrize("width", [4, 8, 16])
def test_shared_rules_match_an_independent_model(mod, width):
    ctype = TYPES[width][0]
    rng = np.random.default_rng(width)
    base = 1024                      # where the simulator puts the first shared byte (bank 0)
    for idx, act in patterns(rng, width):
        addrs = [base + int(i) * width for i in idx]
        active = [bool(a) for a in act]
        run = simulate(mod, f"s_gather<{ctype}>", (32, 1, 1), buf(width, 32), idx, act)
        m = line_metrics(run, "SHARED_GATHER")
        assert (m[M["s_ld_wf"]], m[M["s_ld_bc"]]) == model_shared(addrs, active, width, True), (idx, act)
        run = simulate(mod, f"s_scatter<{ctype}>", (32, 1, 1), buf(width, 32), idx, act)
        m = line_metrics(run, "SCATTER_STORE")
        assert (m[M["s_st_wf"]], m[M["s_st_bc"]]) == model_shared(addrs, active, width, False), (idx, act)


@pytest.mark.parametrize("width", [4, 8, 16])
def test_global_rules_match_an_independent_model(mod, width):
    ctype = TYPES[width][0]
    rng = np.random.default_rng(100 + width)
    src = buf(width, 2048 * 4 // width)
    for idx, act in patterns(rng, width):
        run = simulate(mod, f"g_gather<{ctype}>", (32, 1, 1), buf(width, 32), src, idx, act)
        m = line_metrics(run, "GLOBAL_GATHER")
        addrs = [int(i) * width for i in idx]            # buffers are 4 KiB aligned, as cudaMalloc's
        assert (m[M["g_ld_req"]], m[M["g_ld_sec"]]) == model_global(addrs, [bool(a) for a in act], width)
