"""Inputs that killed the process inside NVRTC give a CompileError instead (course_lib.compile.nvrtc_lib).

NVRTC 12.9 and 13.0 segfault in nvrtcCompileProgram when a name expression instantiates a template
whose parameter list does not parse (``template <trowpename T, int N>`` with ``k<float, 3>``). Each
case runs in a child process, so a crash fails the test instead of killing pytest; the child
prints what the student would see.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from course_lib.compile import nvrtc_lib

ROOT = Path(__file__).resolve().parents[2]
BROKEN = "template <trowpename T, int N> __global__ void k(T* a) { a[0] = N; }"

CHILD = r'''
import json, sys
from course_lib.errors import CompileError
from course_lib.compile import nvrtc
from course_lib.notebook import magic
how, major = sys.argv[1], int(sys.argv[2])
src = sys.argv[3]
try:
    if how == "magic":
        magic.compile_cell('-i "k=k<float, 3>"', src)
    else:       # a CUBIN from exactly this NVRTC, the expressions given as name_expressions
        *first, last = sys.argv[4:] or ["k<float, 3>"]
        for names in first + [last]:        # the same source asked for other instances: refused each time
            try:
                nvrtc.compile_source(src, name_expressions=(names,), arch=80, want_cubin=True,
                                     max_major=major, filename="k.cu")
            except CompileError:
                if names is last:
                    raise
    print(json.dumps(dict(compiled=True)))
except CompileError as exc:
    (line, col, msg), *_ = exc.diagnostics
    print(json.dumps(dict(type=type(exc).__name__, line=line, col=col, msg=msg, hint=exc.hint, text=str(exc))))
'''


def _child(tmp_path, *argv):
    env = dict(os.environ, COURSE_LIB_CACHE=str(tmp_path))
    done = subprocess.run([sys.executable, "-c", CHILD, *argv], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, f"the child died (exit {done.returncode}):\n{done.stderr[-2000:]}"
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("major", [12, 13])
def test_a_name_expression_on_a_template_that_does_not_parse_is_a_compile_error(tmp_path, major):
    try:
        nvrtc_lib.load(major)
    except Exception as exc:        # noqa: BLE001 - an install without this NVRTC
        pytest.skip(str(exc))
    out = _child(tmp_path, "api", str(major), BROKEN)
    assert out["type"] == "CompileError"
    assert (out["line"], out["col"]) == (1, 11) and "trowpename" in out["msg"]
    assert "typename" in out["hint"]


def test_the_magic_cell_with_that_typo_is_a_compile_error_with_line_column_and_hint(tmp_path):
    out = _child(tmp_path, "magic", "13", BROKEN)
    assert out["type"] == "CellCompileError"
    assert (out["line"], out["col"]) == (2, 11)       # line 1 is the %%cuda line
    assert "column 11" in out["text"] and out["hint"]


def test_a_source_that_failed_the_front_end_is_checked_again_with_other_name_expressions(tmp_path):
    """Only a source that got through the front end skips its check the next time (the attack: the same broken
    template asked for with another instance, which NVRTC would die on unchecked)."""
    out = _child(tmp_path, "api", "13", BROKEN, "k<float, 3>", "k<double, 4>")
    assert out["type"] == "CompileError" and "trowpename" in out["msg"]


def test_the_front_end_checks_a_source_once_whatever_its_name_expressions(tmp_path, monkeypatch):
    """The check compiles the source without its name expressions, so a kernel's float and double instances
    (two compilations) ask it one question: before, each paid for the front end twice."""
    from course_lib.compile import cache, nvrtc
    monkeypatch.setattr(cache, "CACHE_DIR", tmp_path)
    monkeypatch.setattr(cache, "memory", {})
    good = f"// {tmp_path}\ntemplate <typename T, int N> __global__ void k(T* a) {{ a[0] = N; }}"
    checks = []
    real = nvrtc_lib.Library._compile

    def counted(self, source, filename, options, *args, **kwargs):
        checks.extend([source] if nvrtc_lib.SYNTAX_ONLY in options else [])
        return real(self, source, filename, options, *args, **kwargs)
    monkeypatch.setattr(nvrtc_lib.Library, "_compile", counted)
    for names in ("k<float, 3>", "k<double, 3>", "k<int, 5>"):
        compiled = nvrtc.compile_source(good, name_expressions=(names,), arch=80, want_cubin=True, filename="k.cu")
        assert compiled.cubin and names in compiled.lowered_names
    assert checks == [good]
