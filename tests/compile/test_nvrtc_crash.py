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
    else:       # a CUBIN from exactly this NVRTC, the expression given as name_expressions
        nvrtc.compile_source(src, name_expressions=("k<float, 3>",), arch=80, want_cubin=True,
                             max_major=major, filename="k.cu")
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
