"""Predict-then-run (course_lib.prediction) and debug-this-kernel tasks (course_lib.debug): the
prediction hides the answer until every guess is given and then grades each one; every debug task's
broken kernel fails its check with a diagnosis, its fix passes, half-fixes do not, and the hint
ladder climbs to the catalog's fix. Simulator only."""
import numpy as np
import pytest

import course_lib as cl
from course_lib.teach import debug, mistakes
from course_lib.notebook import magic

SIM = cl.Simulator()


# ---------------------------------------------------------------------------- predict

def test_prediction_hides_the_answer_until_every_guess_is_given():
    run = SIM.run("rect", PAD=0)
    asked = cl.predict(run, wavefronts_ld=None, sectors_st=4)
    text = repr(asked)
    assert not asked.complete and "your guess: ?" in text and "your guess: 4" in text
    assert "16" not in text and "simulator" not in text.split("\n", 1)[1].split("Replace")[0]


def test_prediction_grades_right_close_and_off_and_says_why():
    run = SIM.run("rect", PAD=0)
    p = cl.predict(run, wavefronts_ld=16, wavefronts_st=1.2, sectors_st=32, conflicts_ld=15)
    text = repr(p)
    assert p.complete and p.right == 2
    assert "✓ shared loads: wavefronts per request" in text and "≈ shared stores" in text
    assert "✗ global stores: sectors per request" in text and "8.0x fewer than you thought" in text
    assert "why: a warp's request costs one sector per distinct 32-byte piece" in text
    assert "line 4" in text and "2 of 4 right" in text


def test_prediction_of_one_line_and_of_a_plain_simrun():
    a = np.random.default_rng(0).random((64, 64), dtype=np.float32)
    k = cl.transposes.kernel("tile", np.float32)
    _, run = k.simulate(a)
    line = next(r["line"] for r in run.instructions if r["space"] == "global" and r["op"] == "st")
    p = cl.predict(run, line=line, sectors_st=4, sectors_ld=4)
    assert p.right == 1 and "this launch, line" in repr(p)        # no global load on the store's line: 0, not 4


def test_prediction_rejects_what_it_cannot_grade():
    run = SIM.run("tile")
    with pytest.raises(cl.ArgumentError, match="one of"):
        cl.predict(run)
    with pytest.raises(cl.ArgumentError, match="unknown quantity 'sectors'"):
        cl.predict(run, sectors=4)
    with pytest.raises(cl.ArgumentError, match="a number"):
        cl.predict(run, sectors_ld="4")
    with pytest.raises(cl.ArgumentError, match="simulated run"):
        cl.predict("tile", sectors_ld=4)


# ---------------------------------------------------------------------------- debug this kernel

def _compiled(task, source):
    return magic.compile_cell("", source)[1][task.kernel]


# (task, the student's fix as (old, new) pairs on the broken source, passes?)
FIXES = {
    "debug_03": [("out[x * cols + y]", "out[x * rows + y]")],
    "debug_04": [("        tile[threadIdx.y][threadIdx.x] = in[y * cols + x];\n",
                             "        tile[threadIdx.y][threadIdx.x] = in[y * cols + x];\n    __syncthreads();\n")],
    "debug_05": [("    int in_idx = iy * nx + ix;\n", "    int in_idx = iy * nx + ix;\n    const int x = ix, y = iy;\n"),
                 ("    if (ix < nx && iy < ny)\n        tile", "    if (x < nx && y < ny)\n        tile"),
                 ("    if (ix < nx && iy < ny)\n        out", "    if (ix < ny && iy < nx)\n        out")],
    "debug_06": [("    if (x < cols && y < rows)\n        tile[threadIdx.y][threadIdx.x] = in[y * cols + x];",
                              "    for (int j = 0; j < TILE; j += 8)\n        if (x < cols && y + j < rows)\n"
                              "            tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * cols + x];")],
    "debug_07": [("    for (int j = threadIdx.x; j < cols / 4; j += blockDim.x)\n        dst[j] = src[j];",
                           "    if (cols % 4 == 0)\n        for (int j = threadIdx.x; j < cols / 4; j += blockDim.x)\n"
                           "            dst[j] = src[j];\n    else\n        for (int j = threadIdx.x; j < cols; j += blockDim.x)\n"
                           "            out[row * cols + j] = in[row * cols + j];")],
    "debug_10": [("    out[x * rows + y] = in[y * cols + x];", "    if (x < cols && y < rows)\n        out[x * rows + y] = in[y * cols + x];")],
}
HALF_FIXES = [
    ("debug_04", "the barrier inside the bounds test", [
        ("        tile[threadIdx.y][threadIdx.x] = in[y * cols + x];\n",
         "    {\n        tile[threadIdx.y][threadIdx.x] = in[y * cols + x];\n        __syncthreads();\n    }\n")],
     "Barrier skipped"),
    ("debug_07", "a rounded-up vector count", [("j < cols / 4", "j < (cols + 3) / 4")], "Misaligned"),
    ("debug_10", "only the rows tested", [("    out[x * rows + y] = in[y * cols + x];",
                                                       "    if (y < rows)\n        out[x * rows + y] = in[y * cols + x];")],
     "Out of bounds"),
    ("debug_03", "the load's index changed instead", [("= in[y * cols + x]", "= in[y * rows + x]")], "Out of bounds"),
    ("debug_05", "only the store's limits swapped", [("    if (ix < nx && iy < ny)\n        out",
                                                        "    if (ix < ny && iy < nx)\n        out")], "Out of bounds"),
    ("debug_06", "a tile as small as the block", [("__shared__ float tile[TILE][TILE + 1];",
                                                               "__shared__ float tile[8][TILE + 1];")], "Out of bounds"),
]


def _apply(source, pairs):
    for old, new in pairs:
        assert old in source, old
        source = source.replace(old, new)
    return source


def test_there_are_at_least_four_tasks_each_from_the_catalog():
    assert len(debug.TASKS) >= 4 and set(FIXES) == set(debug.TASKS)
    for key, t in debug.TASKS.items():
        assert t.mistake_key in mistakes.CATALOG and key == f"debug_{t.lesson}" and len(t.hints) == 3
        assert "void fix_me(" in t.source() and t.mistake_key not in repr(t) and t.hints[-1] == t.mistake.fix


@pytest.mark.parametrize("key", sorted(debug.TASKS))
def test_the_broken_kernel_is_not_fixed_and_its_fix_is(key):
    t = debug.task(key)
    broken = repr(debug.check(key, _compiled(t, t.source())))
    assert broken.startswith(f"✗ {key}: not fixed yet") and "hint:" in broken and f"cl.debug.hint('{key}')" in broken
    fixed = debug.check(key, _compiled(t, _apply(t.source(), FIXES[key])))
    assert fixed.ok, repr(fixed)
    assert repr(fixed).startswith(f"✓ {key}: fixed") and t.mistake.explanation in repr(fixed)


@pytest.mark.parametrize("key,what,pairs,word", HALF_FIXES, ids=[f"{h[0]}: {h[1]}" for h in HALF_FIXES])
def test_a_half_fix_is_not_fixed(key, what, pairs, word):
    t = debug.task(key)
    text = repr(debug.check(key, _compiled(t, _apply(t.source(), pairs))))
    assert "not fixed yet" in text and word in text, text


def test_hints_climb_one_rung_per_call_and_stop_at_the_fix():
    debug._next_hint.pop("debug_10", None)
    first, second, third, again = (debug.hint("debug_10") for _ in range(4))
    assert first.startswith("hint 1 of 3") and "again for the next" in first
    assert second.startswith("hint 2 of 3") and third.startswith("hint 3 of 3") and "the last one" in third
    assert again == third and mistakes.get("missing_bounds_check").fix in third
    assert debug.hint("debug_10", 1) == first and repr(first) == str(first)


def test_task_says_what_to_do_and_unknown_tasks_are_named():
    text = repr(debug.task("debug_07"))
    assert "fix_me should copy in to out" in text and "cl.debug.check('debug_07', fix_me)" in text
    with pytest.raises(KeyError, match="known: "):
        debug.task("nope")
