"""compile.source: a kernel's text is read once into a Source, and everything after asks that Source.

Before the Source, one %%cuda cell of three kernels stripped its comments 5 times (the cell, then the
module's text for each name, signature and template question), 6 once a template was indexed, and a
checked exercise stripped the student's text twice more. Here: once, whatever is asked afterwards."""
import dataclasses
import pickle

import numpy as np
import pytest

import course_lib as cl
from course_lib.compile import source
from course_lib.notebook import magic
from course_lib.teach import exercises, solutions

CELL = """
// __global__ void commented_out(int* gone)
/* __global__ void also_commented(float* gone,
                                  int n) */
template <typename T, int N>
__global__ void tile(T* out, const T* in, int n) { int i = threadIdx.x; if (i < n) out[i] = in[i] * N; }
__global__ void __launch_bounds__(64) scale(float* a, int n) { int i = threadIdx.x; if (i < n) a[i] *= 2; }
__global__ void add(float* a, const float* __restrict__ b, int n) { int i = threadIdx.x; if (i < n) a[i] += b[i]; }
"""


def test_a_source_finds_kernels_in_order_and_not_in_comments():
    src = source.read(CELL)
    assert src.names == ("tile", "scale", "add")
    assert src.templates == ("tile",) and src.is_template("tile") and not src.is_template("scale")
    assert src.text == CELL and "commented_out" not in src.code and "commented_out" in src.text
    assert src.kernel("commented_out") is None and src.signature("commented_out") is None


def test_signatures_read_templates_qualifiers_and_launch_bounds():
    src = source.read(CELL)
    assert [str(p) for p in src.signature("tile<float, 32>")] == ["float* out", "const float* in", "int n"]
    out, inp, n = src.signature("tile<double, 4>")
    assert (out.dtype, inp.dtype, n.dtype) == (np.float64, np.float64, np.int32)
    assert inp.const and inp.pointer and not out.const and not n.pointer
    assert [p.base for p in src.signature("tile")] == ["T", "T", "int"]         # not instantiated: T stays
    assert src.signature("tile")[0].dtype is None
    assert [str(p) for p in src.signature("scale")] == ["float* a", "int n"]
    b = src.signature("add")[1]
    assert b.base == "float" and b.const and b.pointer


def test_overloads_appear_once_per_declaration_and_the_first_is_the_one_read():
    src = source.read("__global__ void k(float* a) {}\n__global__ void k(int* a, int n) {}\n")
    assert src.names == ("k", "k")
    assert [str(p) for p in src.signature("k")] == ["float* a"]
    assert source.mangled_base("_Z1kPii") == "k" and source.mangled_base("k") is None


def test_a_source_is_immutable():
    src = source.read(CELL)
    with pytest.raises(dataclasses.FrozenInstanceError):
        src.names = ()
    with pytest.raises(TypeError):
        src.kernels[0] = src.kernels[1]
    with pytest.raises(dataclasses.FrozenInstanceError):
        src.signature("scale")[0].name = "b"


def test_a_module_holding_a_source_still_pickles():
    module = cl.RawModule(code=CELL)
    again = pickle.loads(pickle.dumps(module))
    assert again.source.names == module.source.names and again.source.signature("add") == module.source.signature("add")


def test_what_nvrtc_gets_keeps_the_lines():
    src = source.read("#include <cstdio>\n#include \"mine.h\"\n__global__ void k() { printf(\"hi\"); }\n")
    assert src.nvrtc.splitlines()[0].startswith("// #include <cstdio>")
    assert src.nvrtc.splitlines()[1:] == src.text.splitlines()[1:]


def test_a_kernel_a_macro_writes_is_not_read_but_still_bound_from_its_ptx():
    cell = "#define KERNEL(name) extern \"C\" __global__ void name(float* a) { a[0] = 1; }\nKERNEL(made)\n"
    module, names = magic.compile_cell("-q", cell)
    assert module.source.names == ("name",)                       # the macro's parameter, not a kernel
    assert names["made"].signature is None and "made(...)" in magic.describe(names)


@pytest.fixture
def strips(monkeypatch):
    """Every text compile.source strips comments from, in order."""
    seen, strip = [], source.strip_comments
    monkeypatch.setattr(source, "strip_comments", lambda text: seen.append(text) or strip(text))
    return seen


def test_one_cell_is_read_once_whatever_is_asked_after(strips):
    module, names = magic.compile_cell("-q", CELL + "\n// read once\n")
    assert magic.describe(names) == ("compiled: scale(float* a, int n); add(float* a, const float* __restrict__ b, "
                                     "int n); tile[...]  (template: index it with its arguments)")
    a = np.ones(64, np.float32)
    names["scale"].simulate(1, 64, (a, np.int32(64)), progress=False, echo=False)
    assert (a == 2).all()
    with pytest.raises(cl.KernelNotFound, match="is a template kernel") as err:
        module.get_function("tile")
    assert "tile takes T* out, const T* in, int n" in str(err.value.hint)
    doubled = names["tile"][np.float32, 2]                       # compiles again, reads nothing again
    doubled.simulate(1, 64, (a, a.copy(), np.int32(64)), progress=False, echo=False)
    assert (a == 4).all() and str(doubled.signature[1]) == "const float* in"
    assert strips == [module.code]


def test_a_checked_kernel_is_not_read_again(strips):
    key = "aos_struct"
    ex = exercises.get(key)
    fn = magic.compile_cell("", solutions.body(key) + "\n// read once\n")[1][ex.kernel]
    assert exercises.check(ex, fn).ok
    assert strips.count(fn.module.code) == 1
