"""Which GPU runs what: the capability table against the compiler, and a card without a feature.

The table (course_lib/notebook/capability.json, README's "Which GPU runs what") is measured by
compiling every course kernel and %%cuda cell to machine code for every architecture; the slow test
compiles it all again and holds the stored table to the compiler. The fast tests check the README
shows the stored table, the feature rules against the compiler's answers, and that a GPU without a
feature (a T4, an A100, an RTX 30/40, modelled here by the real compiler for that architecture)
runs notebook 12's kernels on the simulator with one line saying why, and a right result.
"""
import numpy as np
import pytest

from course_lib import gpu
from course_lib.compile import archs
from course_lib.errors import ArgumentError
from course_lib.gpu.device import DeviceInfo
from course_lib.kernel import arch_fallback
from course_lib.lessons import capability as measured
from course_lib.notebook import capability
from course_lib.transposes import kernel as course_kernel
from course_lib.transposes.data import poisoned, random_matrix

README = capability.STORED.parents[2] / "README.md"


def test_readme_shows_the_stored_table():
    text = README.read_text()
    shown = text.split("<!-- capability table", 1)[1].split("-->", 1)[1].split("<!-- end capability table", 1)[0]
    assert shown.strip() == capability.markdown().strip()


def test_the_stored_table_covers_every_notebook_and_every_course_kernel():
    table = capability.stored()
    stems = sorted(p.stem for p in capability.STORED.parents[2].glob("notebooks/[0-9][0-9]_*.ipynb"))
    assert sorted(table["notebooks"]) == stems
    from course_lib.transposes import catalog
    assert set(table["kernels"]) == set(catalog.SPECS) | set(catalog.DEMOS)
    assert table["archs"] == list(archs.ARCHS)


def test_the_feature_rules_agree_with_the_compiler_wherever_a_feature_sets_the_architecture():
    """Where the compiler refuses an older GPU, the Hopper-era instructions in the PTX say why."""
    for key, row in capability.stored()["kernels"].items():
        if row["sm"] > archs.OLDEST:
            assert row["features_sm"] == row["sm"], (key, row)
            assert all("sm_" in w for w in row["why"]), (key, row)


def test_the_banner_line_names_what_this_gpu_runs_and_where_the_rest_goes():
    assert capability.banner_line(90) == "sm_90 (Hopper: H100, H200): notebooks 00-12 run entirely on this GPU"
    line = capability.banner_line(75)
    assert line.startswith("sm_75 (Turing: T4, RTX 20): notebooks 00-11 run entirely on this GPU; in 12 (sm_90)")
    assert "run on the simulator" in line


@pytest.mark.parametrize("text, sm, names", [
    ("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd2, {%r3, %r4}], [%r5];",
     90, ["TMA"]),
    ("cp.async.ca.shared.global [%r1], [%rd2], 4;", 80, ["cp.async"]),
    ("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%r1, %r2, %r3, %r4}, [%r5];", 75, []),
    ("// stmatrix.sync in a comment is not an instruction\nld.global.f32 %f1, [%rd1];", 75, []),
])
def test_needs_reads_the_instructions_not_the_comments(text, sm, names):
    got, features = archs.needs(text)
    assert got == sm and [f.name for f in features] == names


def test_older_card_mode_is_read_from_the_environment_and_a_wrong_value_is_refused(monkeypatch):
    monkeypatch.setenv(archs.ENV_ARCH, "sm_75")
    assert archs.pretended() == 75
    monkeypatch.setenv(archs.ENV_ARCH, "71")
    with pytest.raises(ArgumentError, match="COURSE_LIB_ARCH='71'") as e:
        archs.pretended()
    assert "75, 80, 86, 89, 90, 100, 120" in e.value.hint
    monkeypatch.delenv(archs.ENV_ARCH)
    assert archs.pretended() is None


def _card(monkeypatch, name, sm):
    """This machine as a GPU of architecture `sm`: its compiler is the real NVRTC + ptxas for sm_XY."""
    info = DeviceInfo(name, sm, 40, 3.2e11, 4 << 20, 1024, (1024, 1024, 64), (2**31 - 1, 65535, 65535),
                      48 << 10, 64 << 10, 16 << 30)
    monkeypatch.setattr(gpu, "available", lambda: True)
    monkeypatch.setattr(gpu, "info", lambda: info)
    monkeypatch.setattr(gpu, "limits", lambda: dict(max_threads=1024, max_block=(1024, 1024, 64),
                                                     max_grid=(2**31 - 1, 65535, 65535), shared_default=48 << 10,
                                                     shared_optin=64 << 10))
    refused = []

    def device_function(fn):
        fn.module.cubin_for(sm)                     # raises CompileError where that GPU's compiler does
        refused.append(fn.name)
        raise AssertionError(f"{fn.name} compiles for sm_{sm}: the test expected the compiler to refuse it")
    monkeypatch.setattr(gpu, "device_function", device_function)
    # a launch compiles for the GPU first (gpu.run.prepare): here that is the compiler for sm_XY alone
    monkeypatch.setattr(gpu, "launch", lambda fn, launch, stream=None: device_function(fn))
    return refused


@pytest.mark.parametrize("name, sm", [("Tesla T4", 75), ("NVIDIA A100-SXM4-80GB", 80), ("NVIDIA GeForce RTX 3090", 86),
                                      ("NVIDIA L4", 89)])
def test_a_card_without_tma_runs_notebook_12_s_kernel_on_the_simulator_and_says_so(monkeypatch, capsys, name, sm):
    _card(monkeypatch, name, sm)
    t = course_kernel("tma_copy", np.float32)
    t.function._gpu_refused = None                   # another test's card may have been asked already
    monkeypatch.setattr(arch_fallback, "_NOTED", set())
    a = random_matrix(64, 96, np.float32, 1)
    out = poisoned(t.out_shape(*a.shape), a.dtype)
    t.run(a, out)
    assert np.array_equal(out, t.expected(a))
    said = capsys.readouterr().out.strip().splitlines()
    assert len(said) == 1 and said[0].startswith(f"simulated as an H100: {'an' if name[0] in 'AN' else 'a'} {name} "
                                                 f"(sm_{sm}) has no TMA")


def test_a_card_that_has_the_feature_is_not_sent_to_the_simulator(monkeypatch):
    refused = _card(monkeypatch, "NVIDIA H100 80GB HBM3", 90)
    fn = course_kernel("tma_copy", np.float32).function
    fn._gpu_refused = None
    with pytest.raises(AssertionError, match="compiles for sm_90"):
        arch_fallback.reason(fn)
    assert refused == [fn.name]


@pytest.mark.slow
def test_the_stored_table_is_the_compiler_s_answer():
    """Every course kernel and %%cuda cell compiled to machine code for sm_120 down to its first refusal (on a
    clean compile cache 77 s of CPU time, 87 before refusals stopped the descent; 2 s once the cache holds the
    compiler's answers, refusals included, for this compiler version: 2026-12-05. A cold run then took 96 s on a
    busy 2-core machine, 57 s once sm_90's CUBIN was the simulator's own compilation and NVRTC's front-end
    check was asked once per source, not once per instance: issue 36)."""
    fresh, table = measured.measure(), capability.stored()
    assert {k: (r["sm"], r["features_sm"]) for k, r in fresh["kernels"].items()} == \
        {k: (r["sm"], r["features_sm"]) for k, r in table["kernels"].items()}
    assert {k: (r["sm"], r["needs_newer"]) for k, r in fresh["notebooks"].items()} == \
        {k: (r["sm"], r["needs_newer"]) for k, r in table["notebooks"].items()}


# ----------------------------------------------------------------------------- fast, and clear about its cache (issue 36)

HOPPER_ONLY = r'''
extern "C" __global__ void fenced(float* out) {
    out[threadIdx.x] = 1.0f;
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");   // sm_90 and newer: ptxas refuses older GPUs
}
'''


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    from course_lib.compile import cache
    monkeypatch.setattr(cache, "CACHE_DIR", tmp_path / "cache")
    monkeypatch.setattr(cache, "memory", {})
    monkeypatch.setattr(cache, "failures", {})
    return cache


def test_a_second_run_asks_the_compiler_nothing(fresh_cache, monkeypatch):
    """Before: every refusal (the TMA kernels on four older GPUs: 2 s each) was compiled again on every run, 51 s
    of a warm run's 56. Now the refusal is kept like a CUBIN, and the run compiles newest first, down to the first
    refusal only: one refusal per kernel on a first run, none on the next."""
    from course_lib import RawModule
    from course_lib.compile import nvrtc_lib
    module = RawModule(code=HOPPER_ONLY)
    assert module.ptx                                  # compiled for the simulator first: its PTX is read too
    asked = []
    real = nvrtc_lib.Library.compile

    def counted(self, source, filename, options, *args, **kwargs):
        asked.append(next(o for o in options if o.startswith("--gpu-architecture")))
        return real(self, source, filename, options, *args, **kwargs)
    monkeypatch.setattr(nvrtc_lib.Library, "compile", counted)
    first = measured._oldest(module)
    assert first["sm"] == 90 and list(first["fails"]) == ["89"]
    # newest first, one refusal; sm_90's CUBIN is the simulator's compilation, made when its PTX was read
    assert asked == [f"--gpu-architecture=sm_{sm}" for sm in (120, 100, 89)]
    fresh_cache.memory.clear()
    fresh_cache.failures.clear()                       # a new process: only the disk cache is left
    asked.clear()
    assert measured._oldest(module) == first and asked == []


def test_progress_is_shown_in_a_terminal_and_now_and_then_in_a_log():
    import io
    log = io.StringIO()
    shown = measured._Shown(log, every_s=3600)
    shown(0, 76, "kernel copy")
    shown(1, 76, "kernel tile")
    assert log.getvalue().splitlines() == ["capability: 0 of 76 compiled (0 s), now kernel copy"]


def test_the_command_says_at_once_when_its_cache_cannot_be_used(tmp_path):
    """Before: with COURSE_LIB_CACHE naming a file, nothing at all for 200 s (every compilation made again, unkept)."""
    import os
    import subprocess
    import sys
    import threading
    bad = tmp_path / "cache-file"
    bad.write_text("a file, not a folder")
    env = dict(os.environ, COURSE_LIB_CACHE=str(bad))
    proc = subprocess.Popen([sys.executable, "-m", "course_lib", "capability"], stderr=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, text=True, env=env)
    first = []
    reader = threading.Thread(target=lambda: first.append(proc.stderr.readline()), daemon=True)
    reader.start()
    reader.join(60)                                   # the first line comes before any compilation
    proc.kill()
    proc.wait()
    assert first, "nothing said within 60 s"
    line = first[0]
    assert line.startswith(f"course_lib: the compile cache {bad} is a file, not a folder"), line
    assert "set COURSE_LIB_CACHE to a folder of your own" in line and "unset it" in line
