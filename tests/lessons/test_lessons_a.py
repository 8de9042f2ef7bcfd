"""Notebooks 00-05: the lesson modules (course_lib.lessons.cpu, warps, start, banks). Their
exercises are tested in tests/teach/test_exercises.py. Simulator only; no timings asserted."""
from pathlib import Path

import numpy as np
import pytest

import course_lib as cl
from course_lib.notebook import magic
from course_lib.lessons import banks, cpu, start, warps

SIM = cl.Simulator()

# ------------------------------------------------------------------ lessons.cpu (01)

def test_cpu_loops_all_transpose():
    a = np.arange(7 * 11, dtype=np.float32).reshape(7, 11)
    for f in (cpu.transpose_loop, cpu.by_rows, cpu.by_columns, lambda x: cpu.blocked(x, 4)):
        assert np.array_equal(f(a), a.T)
    assert np.array_equal(cpu.copy(a), a)
    gbps = cpu.compare(a, dict(copy=cpu.copy, rows=cpu.by_rows, blocked=cpu.blocked), repeat=1)
    assert set(gbps) == {"copy", "rows", "blocked"} and all(v > 0 for v in gbps.values())
    assert cpu.effective_gbps(4 << 20, 0.02e-3) == pytest.approx(419.43, abs=0.01)


def test_cpu_layout_picture_labels_offsets():
    fig = cpu.layout(3, 4)
    assert "@11" in fig.data[0].text[-1] and fig.data[1].text[4] == "(1,0)"
    t = cpu.layout(3, 4, transposed=True)
    assert t.data[2].text[:5] == ("1", "4", "7", "10", "2")   # out's first row: down column 0 of in
    assert len(t.layout.shapes) == 11                            # one arc per jump


# ------------------------------------------------------------------ lessons.warps (02)

def test_block_picture_groups_threads_by_warp():
    bx, by = 16, 4
    lin = np.arange(bx * by)
    fig = warps.block_picture(lin // 32 * 32, lin % 32, (bx, by))
    assert [t.name for t in fig.data] == ["warp 0", "warp 1"]
    assert set(fig.data[0].y) == {0, 1} and "2 warp(s)" in fig.layout.title.text


def test_stride_table_reads_sectors_per_request():
    _, names = magic.compile_cell("", "__global__ void k(float* o, const float* i, int s)\n"
                                      "{ int t = threadIdx.x * s; o[t] = i[t]; }\n")
    runs = {}
    for s in (1, 8):
        a = np.ones(32 * 8, np.float32)
        runs[s] = names["k"].simulate(1, 32, (np.zeros_like(a), a, np.int32(s)))
    text = repr(warps.stride_table(runs))
    lines = text.splitlines()              # the first says where the numbers come from
    assert lines[0] == "simulated (H100 rules)" and "4.0" in lines[2] and "32.0" in lines[3] and "12%" in text


# ------------------------------------------------------------------ lessons.start (00)

def test_ncu_comparison_is_read_and_reproduced():
    rows = start.ncu_rows()
    assert len(rows) >= 100 and rows["tile float32 256x256"][0][4] == 65536
    assert "agree on all 8 memory metrics" in start.ncu_summary()
    text = repr(start.against_ncu(SIM, ("naive_row",)))
    assert "NO" not in text and text.count("yes") == 8
    assert "not in this installation" in start.ncu_summary(start.RESULTS.with_name("missing.md"))


def test_notebook_00_quotes_the_agreement_the_readme_quotes():
    """Notebook 00 and the README name the same ncu run: the README's 'latest run (...): N of M
    launches' is what start.ncu_summary() counts in the file it reads."""
    import re
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    agree, total = re.search(r"latest run[^:]*: (\d+) of (\d+) launches", readme).groups()
    assert f"{agree} of {total} launches agree" in start.ncu_summary()


# ------------------------------------------------------------------ lessons.banks (05)

@pytest.mark.parametrize("label,pads", [("32x32 tile", {0: 32, 1: 1}), ("32x16 block (rect)", {0: 16, 1: 2, 2: 1}),
                                        ("16x16 tile", {0: 8, 1: 2})])
def test_bank_configs_reproduce_the_seed_facts(label, pads):
    for pad, ways in pads.items():
        assert banks.run(SIM, label, pad).ratio("shared", "ld") == ways
    if label == "16x16 tile":
        assert banks.run(SIM, label, 1).ratio("shared", "st") == 2


def test_padding_explorer_redraws_chart_and_table():
    ex = banks.padding_explorer(SIM)
    slider = ex.controls["PAD"]
    assert slider.description == "PAD" and (slider.min, slider.max) == (0, 4)
    before = [repr(ex.items[3]), ex.items[2].data[-1].x, ex.items[1].layout.title.text]
    ex.set(PAD=1)
    after = [repr(ex.items[3]), ex.items[2].data[-1].x, ex.items[1].layout.title.text]
    assert all(b != a for b, a in zip(before, after))
    assert "conflict-free" in after[2] and "PAD=1" in after[0]
    ex.set(tile="16x16 tile")
    assert "2-way" in ex.items[0].layout.title.text and "2-way" in ex.items[1].layout.title.text
