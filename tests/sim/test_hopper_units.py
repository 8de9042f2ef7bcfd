"""The Hopper data-movement semantics of issue 19, module by module (no kernel, no GPU):
matrix_moves (ldmatrix/stmatrix/movmatrix fragments), async_copy (cp.async groups), tma (tensor
maps, boxes, swizzle), mbarrier (phases and transaction bytes). test_hopper_gpu_answers.py checks
the same functions against what an H100 returned."""
import numpy as np
import pytest

from course_lib.errors import ArgumentError
from course_lib.sim.movement import async_copy, matrix_moves as mm, mbarrier, tma


def _mats(nw=2, count=4, seed=1):
    return np.random.default_rng(seed).integers(0, 1 << 16, size=(nw, count, 8, 8), dtype=np.uint16)


@pytest.mark.parametrize("trans", [False, True])
def test_fragment_layout_lane_by_lane(trans):
    m = np.arange(64, dtype=np.uint16).reshape(1, 1, 8, 8)
    regs = mm.fragments(m, trans)[0, :, 0]
    for lane in range(32):
        r, c = lane // 4, 2 * (lane % 4)
        want = (m[0, 0, r, c], m[0, 0, r, c + 1]) if not trans else (m[0, 0, c, r], m[0, 0, c + 1, r])
        assert (regs[lane] & 0xFFFF, regs[lane] >> 16) == want


@pytest.mark.parametrize("trans", [False, True])
def test_stmatrix_undoes_ldmatrix(trans):
    m = _mats()
    assert np.array_equal(mm.matrices_of(mm.fragments(m, trans), trans), m)
    assert np.array_equal(mm.matrices_of(mm.fragments(m, trans), not trans), m.swapaxes(2, 3))


def test_movmatrix_is_the_transposed_fragment_and_its_own_inverse():
    m = _mats(count=1)
    regs = mm.fragments(m, False)[:, :, 0]
    assert np.array_equal(mm.movmatrix(regs), mm.fragments(m, True)[:, :, 0])
    assert np.array_equal(mm.movmatrix(mm.movmatrix(regs)), regs)


def test_row_addresses_come_from_the_first_8_count_lanes():
    addr = np.arange(64, dtype=np.int64).reshape(2, 32) * 16
    assert mm.row_lanes(addr, 2).shape == (2, 2, 8)
    assert mm.row_lanes(addr, 2)[1, 1, 7] == addr[1, 15]
    _, act, width = mm.access_pattern(addr, np.ones((2, 32), bool), 1)
    assert width == 16 and act[:, :8].all() and not act[:, 8:].any()
    assert mm.check_rows(mm.row_lanes(addr + 8, 4)) == (0, 0, 0) and mm.check_rows(mm.row_lanes(addr, 4)) is None
    assert mm.parse_shape(("sync", "aligned", "m8n8", "x4", "trans", "shared", "b16")) == (4, True)
    with pytest.raises(ValueError):
        mm.row_lanes(addr, 3)


def test_cp_async_groups_complete_by_wait_group():
    c = async_copy.AsyncCopies(shared_bytes=256, n_slots=4)
    data = np.arange(16, dtype=np.uint8).reshape(4, 4)
    c.issue(pc=3, line=10, slots=[0, 1, 2, 3], dst_flat=[0, 4, 8, 12], data=data)
    c.commit([0, 1, 2, 3])
    c.issue(pc=5, line=11, slots=[0, 1], dst_flat=[64, 68], data=data[:2])
    c.commit([0, 1])
    assert c.in_flight(np.array([0, 64, 128]), 4).tolist() == [3, 5, -1]
    done = c.wait([0], keep=1)                      # thread 0: its older group only
    assert [(pc, s.tolist()) for pc, _, s, _, _ in done] == [(3, [0])]
    assert c.in_flight(np.array([0, 4]), 4).tolist() == [-1, 3]
    done = c.wait([0, 1, 2, 3], keep=0)
    assert sorted((pc, s.tolist()) for pc, _, s, _, _ in done) == [(3, [1, 2, 3]), (5, [0, 1])]
    assert not c.busy and c.in_flight(np.array([0, 64]), 4).tolist() == [-1, -1]


def test_cp_async_uncommitted_copies_wait_for_the_commit():
    c = async_copy.AsyncCopies(64, 1)
    c.issue(1, 1, [0], [0], np.ones((1, 8), np.uint8))
    assert c.wait([0], keep=0) == [] and c.busy         # wait_group covers committed groups only
    c.commit([0])
    assert len(c.wait([0], keep=0)) == 1


def test_cp_async_sizes_and_zero_fill():
    assert async_copy.source_bytes(16, 5, False) == 5 and async_copy.source_bytes(8, None, True) == 0
    with pytest.raises(ValueError):
        async_copy.source_bytes(2, None, False)
    with pytest.raises(ValueError):
        async_copy.source_bytes(4, 5, False)
    got = async_copy.zero_filled(np.full((2, 3), 7, np.uint8), 8)
    assert got.tolist() == [[7, 7, 7, 0, 0, 0, 0, 0]] * 2
    assert "global load" in async_copy.NOTE


def test_tensor_map_refuses_what_the_driver_refuses():
    a = np.zeros((64, 96), np.float32)
    tma.TensorMap(a, box=(32, 32), swizzle=128)
    for bad, words in (
            (dict(array=np.zeros((64, 97), np.float32), box=(32, 32)), "16"),
            (dict(array=a, box=(32, 64), swizzle=128), "at most 128"),
            (dict(array=a, box=(300, 32)), "1 to 256"),
            (dict(array=a, box=(32, 3)), "16-byte chunks"),
            (dict(array=a, box=(32, 32), swizzle=16), "modes"),
            (dict(array=np.zeros((64, 96), np.int32), box=(32, 32), fill="nan"), "floating"),
            (dict(array=a[:, :48], box=(32, 32)), "C-contiguous"),
            (dict(array=a, box=(32,)), "one size per dimension")):
        array = bad.pop("array")
        with pytest.raises(ArgumentError, match=words):
            tma.TensorMap(array, **bad)


def test_tensor_map_encodes_and_decodes():
    a = np.zeros((40, 24), np.float32)
    m = tma.TensorMap(a, box=(16, 8), swizzle=32, fill="nan")
    raw = m.encode(0x1234_5000)
    assert len(raw) == 128
    d = tma.decode(raw)
    assert d == m.desc(0x1234_5000)
    assert d.dims == (24, 40) and d.strides == (96,) and d.box == (8, 16) and d.swizzle == 32 and d.nan_fill
    assert d.box_bytes == 8 * 16 * 4
    assert tma.decode(bytes(128)) is None


def test_swizzle_128_moves_chunk_c_of_row_r_to_chunk_c_xor_r():
    rows, chunks = np.meshgrid(np.arange(8), np.arange(8), indexing="ij")
    b = 1024 + rows * 128 + chunks * 16
    s = tma.swizzled(b, 128)
    assert np.array_equal((s - 1024) // 128, rows) and np.array_equal((s % 128) // 16, chunks ^ rows)
    for mode in (0, 32, 64, 128):                       # a permutation of every 1024-byte block
        addr = np.arange(1024, 3072)
        assert sorted(tma.swizzled(addr, mode).tolist()) == addr.tolist()
        assert np.array_equal(tma.swizzled(addr, mode) & 15, addr & 15)   # within 16-byte chunks


def test_box_layout_masks_elements_outside_the_tensor():
    a = np.zeros((5, 8), np.uint16)                    # 16-byte rows
    d = tma.TensorMap(a, box=(4, 8)).desc(4096)
    off, inside, shared = tma.box_layout(d, (0, 3), dst=2048)
    assert inside.reshape(4, 8)[:, 0].tolist() == [True, True, False, False]
    assert off.reshape(4, 8)[1, 2] == (4 * 8 + 2) * 2
    assert shared.tolist() == list(range(2048, 2048 + 64, 2))
    off, inside, _ = tma.box_layout(d, (-2, -1), dst=2048)
    assert not inside.reshape(4, 8)[0].any() and inside.reshape(4, 8)[1].tolist() == [False] * 2 + [True] * 6
    assert tma.fill_value(tma.TensorMap(np.zeros((4, 8), np.float32), box=(4, 4), fill="nan").desc(0)) \
        == bytes([0xF7, 0x7F, 0xF7, 0x7F])
    assert tma.check_destination(1024 + 64, 0) and tma.check_destination(1024 + 512, 128)
    assert tma.check_destination(2048, 128) == ""


def test_mbarrier_phases_arrivals_and_bytes():
    bars = mbarrier.MBarriers(slots_per_block=4)
    key = (0, 1040)
    bars.init(key, 4)
    assert bars.arrive(key, count=1, tx=256) == 0       # thread 0: arrive.expect_tx
    bars.complete_tx(key, 256)                          # the copy lands
    assert bars.phase_of(key) == 0                      # three arrivals missing
    assert bars.arrive(key, count=3) == 0 and bars.phase_of(key) == 1
    assert bars.test(key, [0, 1], token=0).all() and not bars.test(key, [2], token=1).any()
    assert bars.has_seen(key, [0, 1, 2, 3], 0).tolist() == [True, True, False, False]
    assert bars.test(key, [2, 3], parity=0).all()        # phase 0 (parity 0) is complete
    bars.complete_tx(key, 128)                           # bytes before their expect_tx
    bars.arrive(key, count=4)
    assert bars.phase_of(key) == 1 and bars.stuck() == [(key, 0, -128)]
    bars.expect_tx(key, 128)                             # the announcement catches up: phase 1 completes
    assert bars.phase_of(key) == 2 and bars.stuck() == []
    assert "128 byte(s)" in mbarrier.describe_stuck([(key, 0, 128)], str)


def test_mbarrier_misuse():
    bars = mbarrier.MBarriers(2)
    with pytest.raises(mbarrier.MBarrierError, match="before mbarrier.init"):
        bars.arrive((0, 1024))
    bars.init((0, 1024), 2)
    with pytest.raises(mbarrier.MBarrierError, match="already"):
        bars.init((0, 1024), 2)
    with pytest.raises(mbarrier.MBarrierError, match="more threads arrive"):
        bars.arrive((0, 1024), count=3)
    with pytest.raises(mbarrier.MBarrierError, match="count"):
        bars.init((0, 2048), 0)
