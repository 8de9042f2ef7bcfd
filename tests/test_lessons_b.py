"""Notebooks 06-11: their exercises (the instructor's cell passes, the student build fails with a
hint, plausible wrong kernels fail with a message that names the problem) and the lesson modules
(course_lib.lessons.occupancy, measured, aos, shapes, capstone). Solutions are read from the
notebooks themselves, so a notebook and its test cannot drift apart. Simulator only; no timings."""
import json
from pathlib import Path

import numpy as np
import pytest

import course_lib as cl
from course_lib import exercises as E
from course_lib import magic
from course_lib.lessons import aos, capstone, measured, occupancy, shapes

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
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


# ---------------------------------------------------------------------------- the notebooks' exercises

CELLS = {  # exercise key -> (notebook, kernel)
    "tile_32x8": ("06_more_work_per_thread.ipynb", "transpose_32x8"),
    "vectorized": ("07_vectorized_access.ipynb", "transpose_vec4"),
    "aos_struct": ("08_aos_struct_loading.ipynb", "aos_to_soa"),
    "packed_b16": ("09_data_types.ipynb", "transpose_b16"),
}


# The simulator counts the machine code: for notebook 08's stub (k = i + j*I, I = 6) ptxas makes
# three conflict-free LDS.64 per lane, so on an H100 the stub has no bank conflicts. The exercise
# needs a new premise (notebook 08); strict, so that these markers go once it has one.
STUB_FUSED = pytest.mark.xfail(not cl.nvrtc.machine_code_missing(), strict=True,
                               reason="ptxas fuses the aos_struct stub's six loads into three conflict-free LDS.64")


@pytest.mark.parametrize("key", [pytest.param(k, marks=STUB_FUSED) if k == "aos_struct" else k for k in CELLS])
def test_instructor_cell_passes_and_student_build_fails_with_a_hint(key):
    notebook, kernel = CELLS[key]
    line, body = exercise_cell(notebook, kernel)
    assert E.has_solution(body)
    report = E.check(key, compiled(body, kernel, line))
    assert report.ok, repr(report)
    stub = E.strip_solutions(body)
    assert "BEGIN SOLUTION" not in stub
    student = E.check(key, compiled(stub, kernel, line))
    assert not student.ok and "hint:" in repr(student)


def _source(key):
    return exercise_cell(*CELLS[key])[1]


# (exercise, what the student got wrong, mutation (old, new), words the report must contain)
WRONG = [
    ("aos_struct", "k = i + j*I (the stub): 2-way column reads",
     ("return n + n / 96;", "return n;"), ["bank conflicts", "2.0 wavefronts per request", "32F"]),
    ("aos_struct", "one word per struct, k = i + j*(I+1): runs out of the padding",
     ("return n + n / 96;", "return n + j;"), ["Out of bounds", "'s'", "size"]),
    ("aos_struct", "one word per struct with room for it: 2-way writes",
     ("return n + n / 96;", "return n + j;", "32 * I + 2]", "32 * (I + 1)]"),
     ["bank conflicts", "shared stores", "2.0 wavefronts per request"]),
    ("aos_struct", "padding after every 32 instead of 96: runs past the array",
     ("return n + n / 96;", "return n + n / 32;"), ["Out of bounds", "shared"]),
    ("aos_struct", "no __syncwarp", ("    __syncwarp();\n", ""), ["no races", "__syncwarp()"]),
    ("aos_struct", "each lane loads its own struct (no shared memory)",
     ("mine[slot(i + lane * I, lane)]", "in[(size_t)(first + lane) * I + i]"),
     ["never touches shared memory", "24.0 sectors per request", "n = l + 32m"]),
    ("packed_b16", "the stub: words passed through unchanged",
     ("lo = __byte_perm(a, b, 0x5410);", "lo = a;", "hi = __byte_perm(a, b, 0x7632);", "hi = b;"),
     ["elements are wrong", "hint:"]),
    ("packed_b16", "selectors of lo and hi swapped",
     ("0x5410", "0xAAAA", "0x7632", "0x5410", "0xAAAA", "0x7632"), ["every element is wrong"]),
    ("packed_b16", "halves of each word swapped",
     ("0x5410", "0x1054", "0x7632", "0x3276"), ["elements are wrong"]),
    ("packed_b16", "unpadded word tile: 16-way column reads",
     ("w[32][32 + 1]", "w[32][32]"), ["bank conflicts", "16.0 wavefronts per request", "pad it by one word"]),
    ("packed_b16", "no barrier", ("    __syncthreads();\n", ""), ["no races", "__syncthreads()"]),
    ("packed_b16", "loads two 16-bit elements separately",
     ("v = *reinterpret_cast<const unsigned*>(in + (size_t)r * cols + c);",
      "v = in[(size_t)r * cols + c] | (unsigned)in[(size_t)r * cols + c + 1] << 16;"),
     ["4-byte global loads and stores", "2 bytes per thread", "32-bit word"]),
]


def _apply(key, mutation):
    src = _source(key)
    for old, new in zip(mutation[::2], mutation[1::2]):
        assert old in src, f"{key}: {old!r} not in the notebook's cell"
        src = src.replace(old, new)
    return src


@pytest.mark.parametrize("key,what,mutation,words",
                         [pytest.param(*w, id=f"{w[0]}: {w[1]}", marks=STUB_FUSED if "(the stub)" in w[1] else ())
                          for w in WRONG])
def test_wrong_kernel_fails_with_a_helpful_message(key, what, mutation, words):
    notebook, kernel = CELLS[key]
    source = _apply(key, mutation)
    report = E.check(key, compiled(source, kernel))
    text = repr(report)
    assert not report.ok and text.startswith("✗") and "hint:" in text
    for w in words:
        assert w in text, f"{what}: expected {w!r} in\n{text}"


def test_every_exercise_of_notebooks_08_to_11_is_tested_here():
    mine = {k for k, ex in E.EXERCISES.items() if ex.lesson in ("08", "09", "10", "11")}
    assert mine == {"aos_struct", "packed_b16"}
    for key in mine:
        assert sum(w[0] == key for w in WRONG) >= 3, key


# ---------------------------------------------------------------------------- 10: batched transposes

BATCHED = exercise_cell("10_real_shapes.ipynb", "transpose_batched")[1]

BATCHED_WRONG = [
    ("the stub: every block works on matrix 0", E.strip_solutions(BATCHED),
     ["matrices 1, 2 of out were never written", "blockIdx.z * rows * cols"]),
    ("only in is moved", BATCHED.replace("    out += blockIdx.z * matrix;\n", ""),
     ["the wrong values come from matrix", "move both pointers"]),
    ("out moved by rows * rows", BATCHED.replace("out += blockIdx.z * matrix;", "out += blockIdx.z * (size_t)rows * rows;"),
     ["96x160", "come from matrix 1", "b * cols * rows"]),
    ("threads outside the matrix return early",
     BATCHED.replace("    for (int j = 0; j < 32; j += 8)\n        if (x < cols",
                     "    if (x >= cols || y >= rows) return;\n    for (int j = 0; j < 32; j += 8)\n        if (x < cols", 1),
     ["Barrier skipped", "do not return early"]),
    ("unpadded tile", BATCHED.replace("[32 + 1]", "[32]"), ["bank conflicts", "32.0 wavefronts per request"]),
]


def test_batched_solution_passes():
    report = shapes.check_batched(compiled(BATCHED, "transpose_batched"))
    assert report.ok, repr(report)
    assert "correct on 5 batches" in repr(report)


@pytest.mark.parametrize("what,source,words", BATCHED_WRONG, ids=[w[0] for w in BATCHED_WRONG])
def test_batched_wrong_kernels_fail_with_a_hint(what, source, words):
    assert source != BATCHED
    text = repr(shapes.check_batched(compiled(source, "transpose_batched")))
    assert text.startswith("✗") and "hint:" in text
    for w in words:
        assert w in text, f"{what}: expected {w!r} in\n{text}"


def test_batched_checker_reports_a_crash_instead_of_raising():
    src = BATCHED.replace("if (x < cols && y + j < rows)", "if (x <= cols && y + j < rows)")
    text = repr(shapes.check_batched(compiled(src, "transpose_batched")))
    assert "stopped the kernel" in text and "Out of bounds" in text and "line" in text


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
    assert "8 KB" in text and "32 KB" in text
    waves = repr(occupancy.waves([big, small], measured.first_bench()))
    assert "248" in waves and "62" in waves and "1.32" in waves and "3.11" in waves
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
    assert "2 wavefront" in fig.layout.title.text and len(fig.data[0].x) == 32 * 6
    assert "conflict-free" in aos.picture(6, "giles").layout.title.text
    fig = aos.sweep_figure([4, 6], [aos.sweep_point(4), aos.sweep_point(6)])
    assert [list(t.y) for t in fig.data][0] == [4.0, 2.0]
    with pytest.raises(KeyError):
        aos.slot(0, 0, 4, "nope")


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
    for n in ("06", "07", "08", "09", "10", "11"):
        path = next(NOTEBOOKS.glob(f"{n}_*.ipynb"))
        raw = path.read_text()
        assert len(raw) < 1_000_000 and "image/png" not in raw and "plotly.min" not in raw, path.name
        nb = json.loads(raw)
        first = nb["cells"][1]
        assert "colab-install" in first["metadata"].get("tags", []), path.name
        assert "cl.setup()" in "".join(nb["cells"][2]["source"]), path.name
