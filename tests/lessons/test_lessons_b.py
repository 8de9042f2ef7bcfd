"""Notebooks 06-11: the lesson modules (course_lib.lessons.occupancy, measured, aos, shapes,
capstone) and the capstone challenge. The exercises of these notebooks are tested in
tests/teach/test_exercises.py. Simulator only; no timings."""
import json
from pathlib import Path

import numpy as np
import pytest

import course_lib as cl
from course_lib.teach import exercises as E
from course_lib.notebook import magic
from course_lib.compile import nvrtc
from course_lib.lessons import rounds, aos, capstone, measured, occupancy, shapes

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
SIM = cl.Simulator()


def exercise_cell(notebook: str, kernel: str) -> tuple[str, str]:
    """(magic line, cell body) of the %%cuda cell of `notebook` that defines `kernel`."""
    nb = json.loads((NOTEBOOKS / notebook).read_text())
    for cell in nb["cells"]:
        src = "".join(cell["source"])
        if cell["cell_type"] == "code" and src.startswith("%%cuda") and f"void {kernel}(" in src:
            line, _, body = src.partition("\n")
            return line[len("%%cuda"):].strip(), body
    raise AssertionError(f"{notebook} has no %%cuda cell defining {kernel}")


def compiled(source: str, kernel: str, line: str = ""):
    return magic.compile_cell(line, source)[1][kernel]


# ---------------------------------------------------------------------------- 10: the batched checker

def test_check_batched_is_the_batched_exercise_and_takes_another_launch():
    from course_lib.teach import solutions
    fn = compiled(solutions.body("batched"), "transpose_batched")
    report = shapes.check_batched(fn)
    assert report.ok and "correct on 5 shapes" in repr(report) and shapes.BATCHES == list(E.get("batched").shapes)
    one = shapes.check_batched(fn, batches=[(2, 40, 72)])
    assert one.ok and "correct on 1 shape;" in repr(one)
    wrong_launch = shapes.check_batched(fn, block=(32, 32))       # the kernel assumes 32x8 threads
    assert not wrong_launch.ok


# ---------------------------------------------------------------------------- 11: the challenge

CHALLENGE = exercise_cell("11_capstone.ipynb", "my_transpose")


def test_challenge_races_a_correct_kernel_modelled_on_the_simulator():
    tmpl = magic.compile_cell(CHALLENGE[0], CHALLENGE[1])[1]["my_transpose"]
    report, board = capstone.challenge(tmpl[32, 8], block=(32, 8), tile=32, backend=SIM)
    assert report.ok, repr(report)
    assert not board.measured and "MODELLED" in repr(board)
    assert {"your kernel", "fast", "padded_32x8"} <= set(board.gbps)
    assert "MODELLED" in capstone.chart(board).layout.title.text


def test_challenge_does_not_race_a_wrong_kernel():
    wrong = CHALLENGE[1].replace("tile[threadIdx.x][threadIdx.y + j]", "tile[threadIdx.y + j][threadIdx.x]")
    tmpl = magic.compile_cell(CHALLENGE[0], wrong)[1]["my_transpose"]
    report, board = capstone.challenge(tmpl[32, 8], block=(32, 8), tile=32, backend=SIM)
    assert board is None and not report.ok and "elements are wrong" in repr(report)


# ---------------------------------------------------------------------------- lesson modules

def test_first_bench_is_read_from_the_results_folder():
    b = measured.first_bench()
    assert "H100" in b.device and b.shape == "8192x8192" and len(b.rows) == 24
    assert b[("padded", "float32")].vs_copy == 0.55 and b[("padded_32x8", "float32")].vs_copy == 0.94
    text = repr(measured.by_dtype(b, ["copy", "padded_32x8"]))
    assert "0.50" in text and "bench_h100_first.txt" in text
    missing = measured.first_bench(Path("/nonexistent/bench.txt"))
    assert not missing.rows and "missing" in repr(measured.table(missing, ["copy"]))


def test_transpose_json_summary(tmp_path):
    case = dict(dtype="float32", rows=64, cols=64, copy_gbps=100, results=[
        dict(name="memcpy", kind="copy", ratio=1.0, correct=True),
        dict(name="fast", kind="course", ratio=0.97, correct=True),
        dict(name="padded", kind="course", ratio=0.5, correct=True),
        dict(name="cupy", kind="peer", ratio=0.31, correct=True),
        dict(name="torch", kind="peer", skipped="ImportError")])
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "transpose.json").write_text(json.dumps(dict(meta=dict(device="GPU X", date="2026"), cases=[case])))
    runs = measured.transpose_runs(tmp_path)
    text = repr(measured.best_vs_peers(runs[0]))
    assert "fast" in text and "0.97" in text and "0.31" in text and "torch" not in text


def test_occupancy_of_the_two_padded_launches():
    big, small = occupancy.Launch.of("padded"), occupancy.Launch.of("padded_32x8")
    assert (big.threads, big.elements_per_thread) == (1024, 1) and (small.threads, small.elements_per_thread) == (256, 4)
    assert occupancy.resident(big) == (2, "threads") and occupancy.resident(small) == (8, "threads")
    assert occupancy.resident(occupancy.Launch.of("tile", BLOCK_ROWS=1, PAD=1))[1] == "blocks"
    assert occupancy.resident(big, "T4") == (1, "threads")
    text = repr(occupancy.table([big, small]))
    assert "8 KiB" in text and "32 KiB" in text
    waves = repr(occupancy.waves([big, small], measured.first_bench()))
    assert "248" in waves and "62" in waves and "1.32" in waves and "3.11" in waves
    five = repr(occupancy.waves([big, small], rounds.load()))           # the median of a five-round run
    ms = rounds.value(rounds.load(), "float32", (8192, 8192), "padded", "ms").median
    assert f"{ms:.3f}" in five and "5 rounds" in five and "2026-11-26" in five
    flight = repr(occupancy.in_flight([big, small], rounds.in_flight()))
    assert "3.3 [3.2-3.3]" in flight and "16.6 [16.5-16.6]" in flight and "537" in flight
    assert "pass 1 of the loop: j = 8" in occupancy.owners(32, 8)


def test_block_rows_sweep_point():
    assert occupancy.block_rows_point(SIM, 16, 32) is None
    p = occupancy.block_rows_point(SIM, 32, 8)
    assert p["threads"] == 2048 and p["inflight_kb"] == 32 and p["gbps"] > 0
    figs = occupancy.block_rows_figures([8, 32], [p, None], TILE=32)
    assert len(figs) == 2 and list(figs[0].data[0].x) == ["32x8"]


@pytest.mark.parametrize("I", [1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 24, 32, 40, 48, 64, 96])
def test_giles_mapping_is_conflict_free_both_ways_and_plain_is_p_way(I):
    P, F = aos.split(I)
    assert P * F == I and P & (P - 1) == 0 and F % 2 == 1
    assert aos.cost(I, "giles", "read") == 1 and aos.cost(I, "giles", "write") == 1
    assert aos.cost(I, "plain", "read") == min(P, 32) and aos.cost(I, "plain", "write") == 1
    assert aos.words(I, "giles") - 32 * I <= max(P - 1, 32 if P > 32 else 0)


def test_aos_numbers_agree_with_the_simulated_kernel():
    for I, MAP, mapping in [(6, 0, "plain"), (8, 0, "plain"), (8, 2, "plus_one"), (24, 1, "giles")]:
        run = SIM.run("aos", shape=(256, I), I=I, MAP=MAP).sim
        assert run.ratio("shared", "ld") == aos.cost(I, mapping, "read")
        assert run.ratio("shared", "st") == aos.cost(I, mapping, "write")


def test_aos_overhead_and_pictures():
    text = repr(aos.overhead([5, 32]))
    assert "0.0%" in text and "3.0%" in text
    fig = aos.picture(6, "plain")
    assert "2 wavefront" in fig.layout.title.text and sum(len(t.x) for t in fig.data) == 32 * 6
    assert {t.marker.symbol for t in fig.data} <= {"square", "diamond"}     # conflicts by shape, not colour alone
    assert "conflict-free" in aos.picture(6, "giles").layout.title.text
    fig = aos.sweep_figure([4, 6], [aos.sweep_point(4), aos.sweep_point(6)])
    assert [list(t.y) for t in fig.data][0] == [4.0, 2.0]
    with pytest.raises(KeyError):
        aos.slot(0, 0, 4, "nope")


# ------------------------------------------------------------------ 08: what ptxas makes of the struct read

MISSING = nvrtc.machine_code_missing()
needs_machine_code = pytest.mark.skipif(bool(MISSING), reason=f"no machine code here: {MISSING}")


@pytest.fixture(scope="module")
def struct_read():
    line, body = exercise_cell("08_aos_struct_loading.ipynb", "struct_read")
    return magic.compile_cell(line, body)[1]["struct_read"]


def _read_code(kernel, I, every=0):
    res = SIM.run(kernel[I, every], block=(32, 4), tile=(I, 128), shape=(1024, I))
    assert res.correct.ok, res.correct
    return aos.shared_code(res.sim, "ld")


@needs_machine_code
@pytest.mark.parametrize("I", [4, 6, 8, 12, 16, 24, 32])
def test_vectors_make_the_plain_read_p_over_v_way_and_giles_stays_four_bytes(struct_read, I):
    """Notebook 08's rule, on the machine code of NVRTC 13.0 for sm_90: with k = i + jI and 16-byte
    aligned rows ptxas loads V = min(P, 4) words at once, each costing P wavefronts (P/V-way), so a
    warp's read costs I*P/V; Giles's padding keeps I conflict-free 4-byte loads."""
    P = aos.split(I)[0]
    V = min(P, 4)
    code, wf, conflicts = _read_code(struct_read, I)
    assert code == f"{I // V} × LDS{'' if V == 1 else f'.{32 * V}'}"
    assert (wf, conflicts) == (I * P / V, I * P / V - I)
    assert _read_code(struct_read, I, aos.every(I)) == (f"{I} × LDS", I, 0)


@needs_machine_code
def test_eight_byte_aligned_rows_leave_i4_two_lds64_with_a_2_way_conflict():
    line, body = exercise_cell("08_aos_struct_loading.ipynb", "struct_read")
    assert "32 * (I + 1)" in body
    kernel = magic.compile_cell(line, body.replace("32 * (I + 1)", "32 * I + 2"))[1]["struct_read"]
    assert _read_code(kernel, 4) == ("2 × LDS.64", 8, 4)


@needs_machine_code
def test_machine_table_and_per_warp_say_what_the_notebook_says(struct_read):
    text = repr(aos.machine_table(SIM, struct_read, [6, 8]))
    assert "3 × LDS.64: 6" in text and "2 × LDS.128: 16 (8 conflicts)" in text and "8 × 4 B: 64" in text
    assert text.count("× LDS: ") == 2 and "6 × 4 B: 12" in text
    run = SIM.run(struct_read[8, 0], block=(32, 4), tile=(8, 128), shape=(1024, 8))
    table = repr(aos.per_warp({"plain": run}))
    assert "2 × LDS.128" in table and "16" in table and "shared loads" in table
    assert "8 × STS" in repr(aos.per_warp({"plain": run.sim}, "st"))


def test_giles_padding_period():
    assert [aos.every(I) for I in (4, 6, 24, 40, 32)] == [32, 96, 96, 160, 32]
    with pytest.raises(ValueError, match="P = 64 > 32"):
        aos.every(64)


def test_shapes_idle_and_coverage():
    d = shapes.idle(1, 4097)
    assert d["grid"] == (129, 1) and d["threads"] == 129 * 256 and d["idle"] > 0.96
    assert shapes.idle(64, 64)["idle"] == 0
    fig = shapes.coverage(100, 70)
    assert "12 blocks" in fig.layout.title.text and len(fig.layout.shapes) == 13
    text = repr(shapes.shape_table(SIM, "padded_32x8", [(100, 70), (1, 300)]))
    assert "43%" in text and "yes" in text and "NO" not in text


def test_modelled_board_is_labelled_and_holds_only_course_kernels():
    b = capstone.board(SIM, np.float16, keys=["padded", "packed", "fast"])
    assert not b.measured and set(b.gbps) == {"padded", "packed", "fast"} and all(b.correct.values())
    text = repr(b)
    assert "MODELLED" in text and "run only on a GPU" in text
    assert b.ranked()[-1] == "padded"
    assert "MODELLED" in capstone.chart(b).layout.title.text


def test_stored_notebooks_are_small_and_hold_no_images():
    for n in ("06", "07", "08", "09", "10", "11", "12"):
        path = next(NOTEBOOKS.glob(f"{n}_*.ipynb"))
        raw = path.read_text()
        assert len(raw) < 1_000_000 and "image/png" not in raw and "plotly.min" not in raw, path.name
        nb = json.loads(raw)
        first = nb["cells"][1]
        assert "colab-install" in first["metadata"].get("tags", []), path.name
        assert "cl.setup()" in "".join(nb["cells"][2]["source"]), path.name
