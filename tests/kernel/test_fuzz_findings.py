"""What the fuzz test (test_fuzz.py, slow tier) found, kept as fast tests: each input once gave a raw or
misleading answer, and now gives a course_lib error that names its real cause, with a hint.

- errors in a name expression were shown on line N of the student's source (NVRTC compiles the
  expressions as lines of its own file, ``__nv_name_map``);
- ``%%cuda --name --use_fast_math`` named the cell ``--use_fast_math.cu``, which NVRTC read as an
  option ("invalid option"); ``-i --name m`` took ``--name`` as the template to instantiate;
- a launch with block z = 65, an unknown NVRTC option and a bad -D had no hint;
- NVRTC counts columns in bytes, so the caret sat right of the error after a 'µ'; a NUL cut the source
  short silently and half a surrogate pair raised UnicodeEncodeError; a pasted curly quote or no-break
  space got the general hint.
"""
import numpy as np
import pytest

import course_lib as cl
from course_lib.compile import diagnostics, nvrtc_lib
from course_lib.notebook import magic

TEMPLATE = "template <typename T, int N>\n__global__ void k(T* a)\n{\n    a[0] = N;\n}\n"
SCALE = "__global__ void scale(float* a, int n) { if (threadIdx.x < n) a[threadIdx.x] *= 2; }\n"


@pytest.mark.parametrize("name, says, hint", [
    ("k<flot, 3>", 'identifier "flot" is undefined', "did you mean 'float'?"),
    ("k<float>", "cannot determine which instance", "'k' takes template <typename T, int N>"),
    ("q<int>", 'identifier "q" is undefined', "this source has no kernel named 'q'"),
])
def test_a_name_expression_that_does_not_compile_is_shown_as_itself(name, says, hint):
    with pytest.raises(cl.CompileError) as err:
        cl.RawModule(code=TEMPLATE).get_function(name)
    text = str(err.value)
    assert text.startswith(f"the kernel name '{name}' does not compile: {says}")
    assert f"  name | {name}" in text and "line 2" not in text and "a[0]" not in text
    assert hint in err.value.hint


def test_a_source_error_in_an_instantiated_template_still_points_into_the_source():
    src = TEMPLATE.replace("a[0] = N;", "a[0] = M;")
    with pytest.raises(cl.CompileError) as err:
        cl.RawModule(code=src, name_expressions=["k<float, 3>"]).compile()
    assert err.value.diagnostics[0][:2] == (4, 12) and 'identifier "M" is undefined' in str(err.value)


def test_every_log_gets_a_hint_and_options_say_so():
    opt = diagnostics.compile_error("", "nvrtc: error: invalid value for --std(-std)\n", "k.cu")
    assert "NVRTC did not accept an option" in opt.hint
    macro = diagnostics.compile_error("", "Command-line error: invalid macro definition: 1\n", "k.cu")
    assert "-DTILE=32" in macro.hint
    typo = diagnostics.compile_error("teplate <typename T> void f();\n",
                                     "k.cu(1): error: teplate is not a template\n  teplate\n  ^\n", "k.cu")
    assert "did you mean 'template'?" in typo.hint
    other = diagnostics.compile_error("x\n", "k.cu(1): error: something new\n", "k.cu")
    assert other.hint == diagnostics.GENERAL_HINT


def test_a_filename_that_starts_with_a_dash_is_not_an_nvrtc_option():
    assert nvrtc_lib.program_name("--use_fast_math.cu") == "use_fast_math.cu"
    assert nvrtc_lib.program_name("-") == "kernel.cu"
    fn = cl.RawModule(code=SCALE, filename="-n.cu").get_function("scale")
    assert fn.name == "scale"


@pytest.mark.parametrize("line, says", [
    ("--name --use_fast_math", "option --name needs a value, but the next word is the option --use_fast_math"),
    ("-i --name m", "option -i needs a value, but the next word is the option --name"),
    ("--name 123", "the module is bound to a Python name"),
    ("-D=1", "defines no name"),
])
def test_magic_option_values_are_checked_before_nvrtc_sees_them(line, says):
    with pytest.raises(magic.MagicUsageError) as err:
        magic.parse_line(line)
    assert says in str(err.value) and err.value.hint


def test_magic_name_with_equals_binds_the_module():
    assert magic.parse_line("--name=tiles -q")["name"] == "tiles"


def test_a_block_too_deep_says_how_to_fix_it():
    fn = cl.RawModule(code=SCALE).get_function("scale")
    with pytest.raises(cl.LaunchError) as err:
        fn.check_launch(1, (1, 1, 65), (np.zeros(4, np.float32), 1))
    assert "exceeds the maximum 64" in str(err.value) and "more blocks in the grid" in err.value.hint



def test_columns_count_characters_and_a_pasted_character_is_named():
    with pytest.raises(cl.CompileError) as err:
        cl.RawModule(code="__global__ void k(float* a) {\n    /*\u00b5\u00b5\u00b5*/ a[0] = zz;\n}\n").compile()
    assert err.value.diagnostics[0][:2] == (2, 20)
    with pytest.raises(cl.CompileError) as err:
        cl.RawModule(code="__global__ void k(float* a) {\n    a[0] = \u201c1\u201d;\n}\n").compile()
    assert "U+201C" in err.value.hint and "plain ASCII" in err.value.hint


@pytest.mark.parametrize("where", ["code", "options", "name_expressions", "filename"])
@pytest.mark.parametrize("char", ["\x00", "\ud800"])
def test_a_character_nvrtc_cannot_take_is_refused_with_where_it_is(where, char):
    kw = dict(code=SCALE + "// end" + char + "\n")
    if where != "code":
        kw = dict(code=SCALE, **{where: "k" + char + ".cu" if where == "filename" else ["-DX=" + char]})
    with pytest.raises(cl.CompileError) as err:
        cl.RawModule(**kw).get_function("scale")
    assert "NVRTC cannot read" in str(err.value) and "UTF-8" in err.value.hint
    str(err.value).encode()           # the message prints
    if where == "code":
        assert "line 2, column 7" in str(err.value)


@pytest.mark.parametrize("code, says", [
    ("int twice(int x) { return 2 * x; }\n__global__ void k(int* a) { a[0] = twice(1); }\n", "needs __device__"),
    ("int table[4];\n__global__ void k(int* a) { a[0] = table[1]; }\n", "__device__ or __constant__"),
])
def test_host_code_in_a_kernel_source_says_what_to_mark(code, says):
    with pytest.raises(cl.CompileError) as err:
        cl.RawModule(code=code).compile()
    assert says in err.value.hint
