"""Notebook 12's lesson module (course_lib.lessons.hopper): the swizzle costs it draws follow the
simulator's rules, the pipeline model behaves, the explorers build."""
import pytest

from course_lib.lessons import hopper


def test_swizzle_costs():
    assert hopper.cost("chunks", 0) == (32, 28)              # 8 rows of one chunk column: one bank group
    for mode in (32, 64, 128):
        assert hopper.cost("chunks", mode) == (4, 0)          # what the TMA's swizzle is for
        assert hopper.cost("column", mode) == (4, 3)          # 4-byte columns stay 4-way: it moves chunks
    assert hopper.cost("column", "xor") == (1, 0)             # notebook 05's per-word XOR
    assert hopper.cost("chunks", "xor") is None
    assert hopper.cost("column", 0) == (32, 31) and all(hopper.cost("row", m) == (1, 0) for m in hopper.MODES.values())
    with pytest.raises(ValueError, match="16-byte"):
        hopper.addresses("chunks", "xor")
    assert "128 B 4" in repr(hopper.cost_table())


def test_layout_picture_is_a_permutation_per_row_and_column():
    z = hopper.layout_picture(128).data[0].z
    assert all(sorted(row) == list(range(8)) for row in z)
    assert all(sorted(col) == list(range(8)) for col in zip(*z))
    assert [list(r) for r in hopper.layout_picture(0).data[0].z] == [list(range(8))] * 8


def test_pipeline_model():
    one = hopper.schedule(1, tiles=4, copy_us=1.0, work_us=0.5)
    two = hopper.schedule(2, tiles=4, copy_us=1.0, work_us=0.5)
    end = lambda rows: max(r["end"] for r in rows)
    assert end(one) == pytest.approx(4 * 1.5) and end(two) < end(one)
    assert end(hopper.schedule(8, tiles=4, copy_us=1.0, work_us=0.5)) == pytest.approx(1.0 + 4 * 0.5)
    measured = hopper.measured_async()
    assert set(measured[("float32", "8192x8192")]) == {1, 2, 3}


def test_explorers_build():
    ex = hopper.swizzle_explorer()
    ex.set(mode="none", access="column")
    ex.set(mode="05's XOR (per word)", access="chunks")
    p = hopper.pipeline_explorer()
    p.set(STAGES=3, copy=2.0)
