"""A check judges the student's last %%cuda cell or nothing (issue 36): in a real IPython shell, as a notebook
runs them, a cell that fixes the race but forgets the ';' after __syncthreads() does not compile, and the check
cell after it names that compile error instead of judging the earlier, racing kernel (which it used to, telling
the student to add the barrier they had just written). Simulator only; nothing timed."""
import pytest

import course_lib as cl
from course_lib.kernel import cells
from course_lib.teach import solutions

SOLVED = solutions.body("shared_tile")
RACING = SOLVED.replace("    __syncthreads();\n", "")
NO_SEMICOLON = SOLVED.replace("__syncthreads();", "__syncthreads()")


@pytest.fixture()
def ip():
    from IPython.core.interactiveshell import InteractiveShell
    shell = InteractiveShell.instance()          # the one other test modules may have made already
    cl.load_ipython_extension(shell)
    shell.run_cell("import course_lib as cl")
    shell.user_ns.pop("transpose_tile", None)
    cells.forget()
    yield shell
    shell.user_ns.pop("transpose_tile", None)
    cells.forget()


def _cell(ip, code):
    return ip.run_cell(code, store_history=True)


def _check(ip, call='cl.exercises.check("shared_tile", transpose_tile)'):
    res = ip.run_cell(call, store_history=True)
    assert res.success, res.error_in_exec
    return repr(res.result)


def test_a_check_after_a_cell_that_did_not_compile_names_its_error_not_the_old_kernels_race(ip, capsys):
    assert RACING != SOLVED and NO_SEMICOLON != SOLVED
    assert _cell(ip, "%%cuda\n" + RACING).success
    assert "no races on shared memory" in _check(ip)                   # the race the student sets out to fix
    assert not _cell(ip, "%%cuda\n" + NO_SEMICOLON).success            # the fix, without its ';'
    assert 'expected a ";"' in capsys.readouterr().out                 # the cell shows its error
    text = _check(ip)
    first = text.splitlines()[1]
    assert "did not compile" in first and "line 14" in first and 'expected a ";"' in first, text
    assert "race" not in text and "__syncthreads() between" not in text and "already right" not in text, text
    assert "run that cell again" in text and "';'" in text                # the compiler's own hint, then what to do
    # the same without naming the kernel (check finds it in the notebook)
    assert "did not compile" in _check(ip, 'cl.exercises.check("shared_tile")')
    # fixed and run again: judged, and it passes
    assert _cell(ip, "%%cuda\n" + SOLVED).success
    assert _check(ip).startswith("✓ shared_tile")


def test_a_failed_cell_with_nothing_bound_before_says_it_did_not_compile(ip):
    assert not _cell(ip, "%%cuda\n" + NO_SEMICOLON).success
    text = _check(ip, 'cl.exercises.check("shared_tile")')
    assert "did not compile" in text and "no transpose_tile to check" in text and "no kernel named" not in text


def test_a_failed_cell_of_another_kernel_casts_no_doubt_on_this_one(ip):
    assert _cell(ip, "%%cuda\n" + SOLVED).success
    assert not _cell(ip, '%%cuda\n__global__ void other(float* a) { a[0] = 1 }\n').success
    assert _check(ip).startswith("✓ shared_tile")


def test_a_bad_magic_line_counts_as_a_cell_that_did_not_compile(ip):
    assert _cell(ip, "%%cuda\n" + RACING).success
    assert not _cell(ip, "%%cuda --instantiate\n" + SOLVED).success      # the option lacks its value
    text = _check(ip)
    assert "did not compile" in text and "needs a value" in text and "race" not in text


def test_a_function_made_in_python_is_judged_whatever_the_cells_did(ip):
    assert not _cell(ip, "%%cuda\n" + NO_SEMICOLON).success
    fn = cl.RawModule(code=SOLVED, filename="mine.cu").get_function("transpose_tile")
    assert cl.exercises.check("shared_tile", fn).ok
