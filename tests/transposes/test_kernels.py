"""The course's kernels: every one bit-exact on awkward shapes for 1-, 2-, 4- and 8-byte
elements, race-free, and each lesson's memory fact as the simulator (Nsight-Compute rules)
counts it. Simulator only; no timings."""
import math

import numpy as np
import pytest

import course_lib as cl

from course_lib import transposes
from course_lib.transposes import verify

DTYPES = [np.float32, np.float64, np.float16, np.uint8]
# a single row, a single column, nothing a multiple of a tile (and rows not 16-byte aligned),
# and a square whose rows are whole 16-byte lines for every element size
SHAPES = [(100, 130), (1, 300), (300, 1), (64, 64)]
DEMO_SHAPES = [(20, 33), (1, 37), (37, 1)]


def simulate(key, dtype=np.float32, shape=(128, 128), races=False, **params):
    """Run a course kernel on random data; assert the result is exact; return the SimRun."""
    t = transposes.kernel(key, dtype, **params)
    a = transposes.random_matrix(*shape, dtype, seed=shape[0] * 7 + shape[1])
    out, run = t.simulate(a, check_races=races)
    result = verify.compare(out, t.expected(a))
    assert result, f"{key} {params} {np.dtype(dtype)} {shape}: {result}"
    return run


def per_request(run, space, op):
    return run.ratio(space, op)


def conflicts(run):
    return sum(r["conflicts"] for r in run.instructions)


def widths(run, op="ld"):
    return {r["width"] for r in run.instructions if r["space"] == "global" and r["op"] == op and r["requests"]}


# ----------------------------------------------------------------------------- correctness
@pytest.mark.parametrize("key", list(transposes.SPECS) + list(transposes.DEMOS))
@pytest.mark.parametrize("dtype", [d if d == np.float32 else pytest.param(d, marks=pytest.mark.slow) for d in DTYPES])
def test_kernel_is_exact_and_race_free(key, dtype):
    spec = transposes.SPECS.get(key) or transposes.DEMOS[key]
    if np.dtype(dtype).itemsize not in spec.itemsizes:          # ldsm: 16-bit elements only
        with pytest.raises(cl.ArgumentError, match="byte elements"):
            transposes.kernel(key, dtype)
        return
    t = transposes.kernel(key, dtype)
    # a TMA kernel refuses rows that are not whole 16-byte pieces: it is checked on the shapes it takes
    shapes = [s for s in (DEMO_SHAPES if key in transposes.DEMOS else SHAPES) if not t.refuses(*s)] or [(96, 160)]
    for k, shape in enumerate(shapes):
        run = simulate(key, dtype, shape, races=k == 0)
        if k == 0:
            assert not run.races, f"{key} {np.dtype(dtype)}: {run.races[0]}"
            # notes about the code (metrics follow the PTX without NVRTC 13/nvdisasm; what ncu counts for
            # TMA and cp.async) are not findings
            found = [w for w in run.warnings if w.line or w.thread is not None]
            assert not found, f"{key} {np.dtype(dtype)}: {found[0]}"


@pytest.mark.slow          # two more compilations of the header-heavy fast kernel
@pytest.mark.parametrize("params, shape", [(dict(TR=32, TC=128, THREADS=128, GROUP=4, CACHE=2), (300, 200)),
                                           (dict(TR=128, TC=32, THREADS=512, SWZ=0, GROUP=3, CACHE=1, MINB=2), (257, 129))])
def test_fast_knobs_keep_it_exact(params, shape):
    for dtype in DTYPES:                       # GROUP: the last band of tile rows is partial
        simulate("fast", dtype, shape, **params)


@pytest.mark.parametrize("params", [dict(TILE=64, BLOCK_ROWS=2), dict(TILE=64, BLOCK_ROWS=8), dict(TILE=128, BLOCK_ROWS=4)])
@pytest.mark.slow          # each tile a compilation of its own
def test_vec_out_is_exact_at_every_tile_its_check_allows(params):
    """A row of 64 or 128 elements is one warp's loads or several (vec_out once covered only 32 rows of a
    64-row tile and returned a half-written transpose); odd and even widths take the one- and two-element loads."""
    for dtype in DTYPES:
        if np.dtype(dtype).itemsize * params["TILE"] * (params["TILE"] + 8) > 48 * 1024:
            continue
        for shape in ((97, 131), (1, 300), (300, 1), (130, 260)):
            simulate("vec_out", dtype, shape, races=shape == (97, 131), **params)


def test_pieces_lanes_run_down_the_rows_so_stores_fill_sectors():
    """pieces.cu's layout claim: with G = 8 row groups per warp a store instruction fills 64 consecutive
    bytes of 4 rows of `out` (its loads pay, 8 bytes of 8 rows); G = 1 reads whole sectors and scatters
    its stores, 8 bytes in each of 32 rows. The kernel comment quotes these counts."""
    dense, along = simulate("pieces", np.uint8, (1000, 1030)), simulate("pieces", np.uint8, (1000, 1030), G=1)
    assert round(per_request(dense, "global", "st"), 1) == 10.8 and round(per_request(dense, "global", "ld"), 1) == 9.3
    assert round(per_request(along, "global", "st"), 1) == 30.3 and round(per_request(along, "global", "ld"), 1) == 2.8
    for dtype in (np.uint8, np.float16):         # odd cols, rows % 8 != 0, a piece past the edge: element by element
        for shape, params in (((97, 131), {}), ((1, 300), {}), ((300, 1), {}), ((40, 66), dict(TILE=32, G=4))):
            simulate("pieces", dtype, shape, races=shape == (97, 131), **params)


def test_unknown_parameter_and_bad_tile_are_explained():
    with pytest.raises(cl.ArgumentError, match="has no parameter"):
        transposes.kernel("rect", PADDING=1)
    with pytest.raises(ValueError, match="48 KiB"):
        transposes.kernel("fast", np.float64, TR=128, TC=128)
    with pytest.raises(ValueError, match="power of two"):
        transposes.kernel("swizzle", TILE=24)


@pytest.mark.parametrize("dtype, tr, tc, ok", [(np.uint8, 32, 32, False), (np.uint8, 16, 64, False),
                                                (np.uint8, 32, 128, True), (np.float16, 16, 64, True),
                                                (np.float16, 16, 16, False), (np.float64, 8, 32, True)])
def test_fast_refuses_exactly_the_tiles_its_static_assert_refuses(dtype, tr, tc, ok):
    """A tile fast.cu cannot split is a ValueError before compiling (transpose.py skips it), and a
    tile the check accepts compiles: the two rules must agree (all 96 small tiles did, 2026-11-24)."""
    if not ok:
        with pytest.raises(ValueError, match="row groups"):
            transposes.kernel("fast", dtype, TR=tr, TC=tc, THREADS=128)
        return
    t = transposes.kernel("fast", dtype, TR=tr, TC=tc, THREADS=128)
    assert t.function is not None                 # compiles: no static_assert fired


# ----------------------------------------------------------------------------- 03, 01, 06
def test_per_row_reads_coalesced_writes_strided():
    run = simulate("per_row", shape=(64, 256))
    assert per_request(run, "global", "ld") == 4 and per_request(run, "global", "st") == 32


def test_copy_through_shared_has_no_conflicts():
    run = simulate("copy_shared")
    assert per_request(run, "global", "ld") == 4 and per_request(run, "global", "st") == 4
    assert conflicts(run) == 0


# ----------------------------------------------------------------------------- 05: banks
@pytest.mark.parametrize("key", ["rect", "unrolled"])
def test_rectangular_block_is_16_way_then_2_way_then_clear(key):
    """CUDA_Freshman's 32x16 block with irow = tid / 16, icol = tid % 16: IPAD 0, 1, 2."""
    for pad, ways in [(0, 16), (1, 2), (2, 1)]:
        run = simulate(key, PAD=pad)
        assert per_request(run, "shared", "ld") == ways, (key, pad)
        assert per_request(run, "shared", "st") == 1
        assert per_request(run, "global", "ld") == 4 and per_request(run, "global", "st") == 4


def test_16x16_tile_padded_by_one_is_still_2_way_on_load_and_store():
    run = simulate("tile", TILE=16, BLOCK_ROWS=16, PAD=1)
    assert per_request(run, "shared", "ld") == 2 and per_request(run, "shared", "st") == 2
    # unpadded, a warp covers two 16-float rows: rows share banks pairwise -> 8-way, not 16
    run = simulate("tile", TILE=16, BLOCK_ROWS=16, PAD=0)
    assert per_request(run, "shared", "ld") == 8 and per_request(run, "shared", "st") == 1


@pytest.mark.parametrize("dtype", DTYPES)
def test_swizzle_is_conflict_free_without_padding(dtype):
    run = simulate("swizzle", dtype)
    assert conflicts(run) == 0
    phases = 2 if np.dtype(dtype).itemsize == 8 else 1
    assert per_request(run, "shared", "ld") == phases and per_request(run, "shared", "st") == phases


# ----------------------------------------------------------------------------- 06
def test_unrolled_block_loads_stay_coalesced():
    run = simulate("unrolled", UNROLL=2)
    assert per_request(run, "global", "ld") == 4 and conflicts(run) == 0


# ----------------------------------------------------------------------------- 07: vectors
def test_float4_tile_column_read_is_8_way_and_how_padding_changes_it():
    run = simulate("vec", PAD=0)
    assert per_request(run, "global", "ld") == 16 and per_request(run, "global", "st") == 16
    assert per_request(run, "shared", "st") == 4          # 16-byte stores: four quarter-warp phases
    assert per_request(run, "shared", "ld") == 8          # rows 4 apart = 128 words: one bank
    assert per_request(simulate("vec", PAD=4), "shared", "ld") == 4   # one vector of padding
    run = simulate("vec", PAD=1)                          # scalar tile stores, no conflicts
    assert conflicts(run) == 0 and per_request(run, "shared", "st") == 1


@pytest.mark.parametrize("dtype", DTYPES)
def test_vec64_is_16_sectors_per_request_and_conflict_free(dtype):
    run = simulate("vec64", dtype, shape=(256, 256))
    assert widths(run, "ld") == {16} and widths(run, "st") == {16}
    assert per_request(run, "global", "ld") == 16 and per_request(run, "global", "st") == 16
    assert conflicts(run) == 0
    assert per_request(run, "shared", "st") == 4          # 16-byte stores, the minimum


def test_vec64_without_swizzle_shows_the_8_way_float4_conflict():
    assert per_request(simulate("vec64", shape=(64, 64), SWZ=0), "shared", "ld") == 8
    assert per_request(simulate("vec64", shape=(64, 64), TR=32, TC=32, SWZ=0), "shared", "ld") == 8


@pytest.mark.parametrize("dtype, shape", [
    (np.float32, (130, 130)), (np.float64, (129, 129)), (np.float16, (258, 258)), (np.float16, (257, 257)),
    (np.uint8, (260, 260)), (np.uint8, (257, 257)), (np.uint8, (256, 257)), (np.float32, (257, 256))])
def test_fast_moves_misaligned_rows_in_aligned_16_byte_chunks_without_conflicts(dtype, shape):
    """Rows not starting on 16-byte boundaries: still (almost) only 16-byte accesses; only the
    chunks at the ends of each output row are split (1.5% of the bytes at 1025x1027 u8;
    more on these small shapes, where most tiles touch an edge)."""
    run = simulate("fast", dtype, shape)
    for op in ("ld", "st"):
        moved = {w: sum(r["bytes"] for r in run.instructions if r["space"] == "global" and r["op"] == op
                        and r["width"] == w) for w in widths(run, op)}
        assert moved.get(16, 0) >= 0.9 * sum(moved.values()), (op, moved)
    assert conflicts(run) == 0


# ----------------------------------------------------------------------------- 08: AoS
@pytest.mark.parametrize("I", list(range(1, 17)) + [24, 64])
def test_giles_mapping_is_conflict_free_and_naive_mapping_is_gcd_way(I):
    structs = transposes.random_matrix(128, I, np.float32)      # 128 structs of I floats
    assert structs.shape == (128, I)
    padded = simulate("aos", shape=(128, I), I=I, MAP=1, WARPS=2)
    assert conflicts(padded) == 0
    assert per_request(padded, "global", "ld") == 4 and per_request(padded, "global", "st") == 4
    if I % 2 == 0:
        naive = simulate("aos", shape=(128, I), I=I, MAP=0, WARPS=2)
        assert per_request(naive, "shared", "ld") == math.gcd(I, 32)
        assert per_request(naive, "shared", "st") == 1


def test_one_word_per_struct_padding_trades_read_for_write_conflicts():
    run = simulate("aos", shape=(128, 8), I=8, MAP=2, WARPS=2)     # k = i + j*(I+1)
    assert per_request(run, "shared", "ld") == 1 and per_request(run, "shared", "st") == 2


# ----------------------------------------------------------------------------- 09: dtypes
def test_double_tile_read_by_column_costs_32_wavefronts_where_2_is_ideal():
    run = simulate("tile", np.float64)
    assert per_request(run, "shared", "ld") == 32 and per_request(run, "shared", "st") == 2
    assert per_request(simulate("padded", np.float64), "shared", "ld") == 2


@pytest.mark.parametrize("dtype, ways", [(np.float32, 32), (np.float16, 16), (np.uint8, 8)])
def test_packed_words_conflict_by_groups_unpadded_and_not_padded(dtype, ways):
    run = simulate("packed", dtype, PAD=0)
    assert per_request(run, "global", "ld") == 4 and per_request(run, "global", "st") == 4
    assert per_request(run, "shared", "ld") == ways
    assert conflicts(simulate("packed", dtype, PAD=1)) == 0


# ----------------------------------------------------------------------------- 10: misaligned rows
@pytest.mark.parametrize("dtype", DTYPES)
def test_sector_tile_writes_each_output_sector_once(dtype):
    """Rows of `out` that start mid-sector (255 x 259 in, so rows of 255 elements out): the course's
    tiles write the sectors at their edges in two halves, one per neighbouring tile (for floats a
    quarter more store sectors than the output has); `sector` moves the tile edges to sector
    boundaries, so only the sector where one output row ends and the next begins is written twice."""
    rows, cols = 255, 259
    nbytes = rows * cols * np.dtype(dtype).itemsize
    sectors = -(-nbytes // 32)
    run = simulate("sector", dtype, (rows, cols))
    assert run.metrics["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"] <= sectors + cols
    plain = simulate("padded_32x8", dtype, (rows, cols))
    assert plain.metrics["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"] > sectors + 4 * cols


@pytest.mark.parametrize("dtype", DTYPES)
def test_sector_tile_reads_halo_rows_only_when_output_rows_are_misaligned(dtype):
    aligned = simulate("sector", dtype, (256, 256))             # every output row starts a sector
    nbytes = 256 * 256 * np.dtype(dtype).itemsize
    assert aligned.metrics["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == nbytes // 32
    shifted = simulate("sector", dtype, (1023, 128))            # rows of `out` are 1023 elements
    assert shifted.metrics["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] > 1023 * 128 * np.dtype(dtype).itemsize // 32


def test_sector_tile_explains_bad_knobs():
    with pytest.raises(ValueError, match="TC must be 128"):
        transposes.kernel("sector", np.uint8, TC=64)
    with pytest.raises(ValueError, match="TR of 8"):
        transposes.kernel("sector", np.float32, TR=36)
    with pytest.raises(ValueError, match="48 KiB"):
        transposes.kernel("sector", np.float64, TR=256, TC=64)
