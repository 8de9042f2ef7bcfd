"""Every classic mistake in course_lib.mistakes gets a diagnosis a student can act on:
the right kind, the right source line, who (thread/block) and what (buffer/array), and a hint.
Plus the pieces those diagnoses rely on: notebook rendering, blocks=, the per-batch time limit."""
import numpy as np
import pytest

import course_lib as cl
from course_lib.teach import mistakes
from course_lib.errors import KernelError

SIMULATOR_KINDS = {"MemoryAccessError", "BarrierError", "SimulationLimit", "AssertionFailed", "uninitialized read",
                   "RAW race", "WAR race", "WAW race"}


@pytest.mark.parametrize("key", mistakes.keys())
def test_mistake_is_diagnosed(key):
    m = mistakes.get(key)
    d = m.diagnose()
    assert d.kind == m.expect, f"{key}: expected {m.expect}, got {d.kind}:\n{d.text}"
    assert d.lines == m.expected_lines(), f"{key}: points at {d.lines}, expected {m.expected_lines()}\n{d.text}"
    for word in m.mentions:
        assert word in d.text, f"{key}: the diagnosis does not mention {word!r}:\n{d.text}"
    assert d.hint, f"{key}: no hint"
    assert "Traceback" not in d.text and "File \"" not in d.text
    if d.kind in SIMULATOR_KINDS:
        assert d.thread is not None and d.block is not None
        assert "thread (" in d.text and "block (" in d.text
    if d.error is not None and d.lines and not isinstance(d.error, cl.CompileError):
        assert f"cell.cu:{d.lines[0]}" in d.text           # the line, with its source text
        assert m.source.splitlines()[d.lines[0] - 1].strip()[:20] in d.text


def test_catalog_covers_the_issue():
    required = {"missing_syncthreads", "sync_in_branch", "off_by_one", "swapped_rows_cols", "missing_bounds_check",
                "shared_halo_overflow", "misaligned_float4", "block_too_large", "too_much_shared", "grid_too_large",
                "infinite_loop", "uninitialized_shared", "shared_per_block", "wrong_argument_count", "wrong_dtype",
                "non_contiguous", "int_overflow", "missing_semicolon", "undeclared_variable", "wrong_type",
                "kernel_name_typo"}
    assert required <= set(mistakes.keys())
    assert len(mistakes.keys()) >= 20


@pytest.mark.parametrize("key", mistakes.keys())
def test_every_entry_shows_and_explains(key):
    m = mistakes.get(key)
    shown = m.show()
    assert m.title in shown and "```cuda" in shown and m.launch.strip() in shown
    assert "  1  " in shown                               # numbered like the messages' line numbers
    text = m.explain()
    assert "What went wrong" in text and "Fix" in text and len(m.fix) > 5
    assert m.expect in m._repr_markdown_()


def test_unknown_mistake_suggests_a_close_key():
    with pytest.raises(KeyError, match="off_by_one"):
        mistakes.get("off_by_on")


def test_table_lists_every_entry():
    t = mistakes.table()
    assert all(f"`{k}`" in t for k in mistakes.keys())


# ----------------------------------------------------------------------------- how errors render

def test_notebook_shows_the_diagnosis_not_a_traceback():
    err = mistakes.get("off_by_one").diagnose().error
    lines = err._render_traceback_()
    text = "\n".join(lines)
    assert "MemoryAccessError" in lines[0] and "Out of bounds" in lines[0]
    assert "hint:" in text and "cell.cu:5" in text
    assert "raised by" in text and "k.simulate" in text    # the student's own line
    assert "course_lib/sim" not in text and "Traceback" not in text
    assert len(lines) <= 8


def test_full_traceback_can_be_asked_for(monkeypatch):
    monkeypatch.setenv("COURSE_LIB_TRACEBACK", "1")
    err = KernelError("x")
    assert not hasattr(err, "_render_traceback_")


def test_str_is_the_same_text_everywhere():
    err = mistakes.get("sync_in_branch").diagnose().error
    assert str(err) == err.args[0] or str(err).startswith(err.message)
    assert str(err).splitlines()[0].startswith("Deadlock")


# ----------------------------------------------------------------------------- simulator pieces

SCALE = r'''
extern "C" __global__ void mark(int* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = blockIdx.x * 1000 + blockIdx.y;
}
'''


def test_blocks_option_runs_only_those_blocks():
    k = cl.RawModule(code=SCALE, filename="cell.cu").get_function("mark")
    out = np.full(8 * 32, -1, np.int32)
    k.simulate((8, 3), (32,), (out, np.int32(out.size)), blocks=[(5, 2), (1, 0)])
    written = np.flatnonzero(out != -1)
    assert set(written // 32) == {1, 5}
    assert (out[5 * 32:6 * 32] == 5002).all() and (out[32:64] == 1000).all()


def test_blocks_outside_the_grid_are_refused():
    k = cl.RawModule(code=SCALE, filename="cell.cu").get_function("mark")
    with pytest.raises(cl.LaunchError, match="outside the grid"):
        k.simulate((8,), (32,), (np.zeros(256, np.int32), np.int32(256)), blocks=[(8, 0)])


def test_a_batch_that_runs_too_long_is_stopped_with_the_loop_named():
    m = mistakes.get("infinite_loop")
    k = cl.RawModule(code=m.source, filename="cell.cu").get_function("scale")
    x = np.ones(1024, np.float32)
    with pytest.raises(cl.SimulationLimit) as e:
        k.simulate((4,), (256,), (x.copy(), x, np.int32(1024)), timeout=0.2, max_steps=10**9)
    assert e.value.timed_out and "still running" in str(e.value) and "the loop at line" in str(e.value)
    assert e.value.line == 3


def test_course_kernels_have_no_uninitialized_reads_or_races():
    from course_lib import transposes
    t = transposes.kernel("padded_32x8", np.float32)
    _, run = t.simulate(transposes.random_matrix(70, 45, np.float32))
    assert not run.races and not run.warnings
