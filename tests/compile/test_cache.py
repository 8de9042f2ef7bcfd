"""The compile cache (course_lib.compile.cache): every entry hashed, a damaged or edited entry recompiled
and replaced (once, not forever), and nothing read that this user did not write."""
import hashlib
import json
import os
import stat
import time
from pathlib import Path

import numpy as np
import pytest

import course_lib as cl
from course_lib.compile import cache as cache_module
from course_lib.compile import cache_lock, nvrtc, sass
from course_lib.transposes import poisoned, random_matrix

SCALE = r'''
__global__ void scale(float* out, const float* in, int n, float s) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] * s;
}
'''


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setattr(cache_module, "CACHE_DIR", tmp_path)
    monkeypatch.setattr(cache_module, "memory", {})
    monkeypatch.setattr(cache_module, "failures", {})
    return nvrtc, tmp_path


def _entry(tmp_path, suffix):
    (path,) = [p for p in tmp_path.iterdir() if p.suffix == suffix]
    return path


def test_every_cache_entry_carries_the_hash_of_its_ptx_and_cubin(cache):
    nvrtc, tmp = cache
    c = nvrtc.compile_source(SCALE, arch=90, want_cubin=True)
    d = json.loads(_entry(tmp, ".json").read_text())
    assert d["ptx_sha256"] == hashlib.sha256(c.ptx.encode()).hexdigest()
    assert d["cubin_sha256"] == hashlib.sha256(c.cubin).hexdigest() == hashlib.sha256(_entry(tmp, ".cubin").read_bytes()).hexdigest()
    assert not [p for p in tmp.iterdir() if ".tmp" in p.name]


@pytest.mark.parametrize("corrupt", ["null", "{}", "[1, 2]", "truncated", "missing key", "wrong type",
                                     "ptx edited", "no hash", "empty file"])
def test_a_corrupted_cache_entry_is_recompiled_and_replaced(cache, corrupt):
    nvrtc, tmp = cache
    first = nvrtc.compile_source(SCALE)
    meta = _entry(tmp, ".json")
    good = json.loads(meta.read_text())
    bad = {"null": "null", "{}": "{}", "[1, 2]": "[1, 2]", "truncated": meta.read_text()[:100], "empty file": "",
           "missing key": json.dumps({k: v for k, v in good.items() if k != "entries"}),
           "wrong type": json.dumps({**good, "arch": "90"}),
           "ptx edited": json.dumps({**good, "ptx": good["ptx"].replace("mul.f32", "add.f32")}),
           "no hash": json.dumps({k: v for k, v in good.items() if k != "ptx_sha256"})}[corrupt]
    assert bad != json.dumps(good)
    for _ in range(2):                                         # not once, and not forever
        meta.write_text(bad)
        cache_module.memory.clear()
        again = nvrtc.compile_source(SCALE)
        assert again.ptx == first.ptx and again.entries == first.entries
        assert json.loads(meta.read_text()) == good            # the entry was rewritten whole
    x = random_matrix(1, 64, np.float32)[0]
    out = poisoned(64, np.float32)
    cl.RawModule(code=SCALE).get_function("scale").simulate(1, 64, (out, x, 64, 2.0))
    assert (out == 2 * x).all()


@pytest.mark.parametrize("damage", ["truncated", "missing", "other bytes"])
def test_a_damaged_cubin_is_recompiled(cache, damage, capsys):
    nvrtc, tmp = cache
    first = nvrtc.compile_source(SCALE, arch=90, want_cubin=True)
    blob = _entry(tmp, ".cubin")
    if damage == "missing":
        blob.unlink()
    else:
        blob.write_bytes(first.cubin[:64] if damage == "truncated" else bytes(reversed(first.cubin)))
    cache_module.memory.clear()
    capsys.readouterr()
    assert nvrtc.compile_source(SCALE, arch=90, want_cubin=True).cubin == first.cubin
    assert blob.read_bytes() == first.cubin
    said = capsys.readouterr().err                  # the warning names the file that broke, not its listing
    assert f"{blob.name} was damaged" in said and ".json was damaged" not in said


# ----------------------------------------------------------------------------- private to this user

SRC = "extern \"C\" __global__ void k(float* o) { o[threadIdx.x] = %d; }"


@pytest.fixture
def private(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setattr(cache_module, "CACHE_DIR", folder)
    monkeypatch.setattr(cache_module, "memory", {})
    return folder


def test_cache_files_are_private(private):
    nvrtc.compile_source(SRC % np.random.randint(1 << 30))
    assert stat.S_IMODE(private.stat().st_mode) == 0o700
    files = list(private.iterdir())
    assert files and all(stat.S_IMODE(f.stat().st_mode) == 0o600 for f in files)


def test_a_cache_folder_left_open_is_closed(private):
    private.mkdir(mode=0o755)
    os.chmod(private, 0o755)
    nvrtc.compile_source(SRC % np.random.randint(1 << 30))
    assert stat.S_IMODE(private.stat().st_mode) == 0o700


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to give the folder away")
def test_a_cache_folder_of_someone_else_is_never_read_or_written(private, monkeypatch):
    src = SRC % np.random.randint(1 << 30)
    first = nvrtc.compile_source(src)
    stored = sorted(private.iterdir())
    planted = first.ptx.replace(".entry k", ".entry planted")
    for f in private.glob("*.json"):
        f.write_text(json.dumps({**json.loads(f.read_text()), "ptx": planted}))
    os.chown(private, 65534, 65534)
    monkeypatch.setattr(cache_module, "memory", {})
    again = nvrtc.compile_source(src)
    assert ".entry planted" not in again.ptx and again.ptx == first.ptx
    assert sorted(private.iterdir()) == stored      # nothing new written there


# ----------------------------------------------------------------------------- healing itself (issue 26)

def _warned(capsys) -> list[str]:
    return [line for line in capsys.readouterr().err.splitlines() if line.strip()]


def test_a_damaged_entry_says_so_in_one_line(cache, capsys):
    nvrtc, tmp = cache
    nvrtc.compile_source(SCALE)
    _entry(tmp, ".json").write_text("{")
    cache_module.memory.clear()
    capsys.readouterr()
    nvrtc.compile_source(SCALE)
    (line,) = _warned(capsys)
    assert "damaged" in line and "rebuilt" in line and _entry(tmp, ".json").name in line
    cache_module.memory.clear()
    nvrtc.compile_source(SCALE)
    assert _warned(capsys) == []                            # healed: no warning the next time


needs_nvdisasm = pytest.mark.skipif(sass.nvdisasm_path() is None, reason="nvdisasm is not installed")


@needs_nvdisasm
@pytest.mark.parametrize("damage", ["truncated", "empty", "garbage bytes"])
def test_a_damaged_sass_entry_is_rebuilt_with_a_one_line_warning(cache, capsys, damage):
    """Before: a truncated or empty entry moved every later run of the kernel to PTX counts, silently;
    garbage bytes made every simulation of it raise UnicodeDecodeError until deleted by hand."""
    nvrtc, tmp = cache
    cubin = nvrtc.compile_source(SCALE, arch=90, want_cubin=True).cubin
    listing = sass.disassemble(cubin, tmp)
    (entry,) = (tmp / "sass").iterdir()
    good = entry.read_bytes()
    entry.write_bytes({"truncated": good[:len(good) // 2], "empty": b"", "garbage bytes": b"\xff\xfe\x00garbage\x9c",
                       }[damage])
    capsys.readouterr()
    assert sass.disassemble(cubin, tmp) == listing
    (line,) = _warned(capsys)
    assert "damaged" in line and "rebuilt" in line and entry.name in line
    assert entry.read_bytes() == good
    assert sass.disassemble(cubin, tmp) == listing and _warned(capsys) == []


def test_temporary_files_of_killed_writes_are_cleaned(cache):
    nvrtc, tmp = cache
    (tmp / "sass").mkdir()
    dead = 2 ** 22 + 12345                                  # above Linux's pid_max default: never alive
    left = [tmp / f"0123.json.tmp{dead}", tmp / f"0123.cubin.tmp{dead}", tmp / "sass" / f"0123.tmp{dead}"]
    mine = tmp / f"4567.json.tmp{os.getpid()}"             # a write in progress in this process: kept
    for p in left + [mine]:
        p.write_bytes(b"half a")
    cache_module.cleaned.clear()
    nvrtc.compile_source(SRC % np.random.randint(1 << 30))
    assert not any(p.exists() for p in left) and mine.exists()


# ----------------------------------------------------------------------------- failures kept, a bad cache said (issue 36)

BROKEN = "__global__ void k(float* o) { o[threadIdx.x] = undefined_name; }"


def _no_compiler(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("NVRTC was asked again")
    monkeypatch.setattr(nvrtc.nvrtc_lib.Library, "compile", refuse)


def test_a_failed_compilation_is_kept_and_answered_again_without_the_compiler(cache, monkeypatch):
    """`capability` compiled the TMA kernels for four older GPUs on every run, each refusal 2 s of NVRTC (51 of its
    56 s on a warm cache): a refusal is as much the compiler's answer as a CUBIN, so it is kept the same way."""
    nvrtc, tmp = cache
    with pytest.raises(cl.CompileError) as first:
        nvrtc.compile_source(BROKEN, arch=75, want_cubin=True)
    assert [p.suffix for p in tmp.iterdir() if p.is_file()] == [".failed"]
    _no_compiler(monkeypatch)
    for clear in (False, True):                              # from memory, then from disk
        if clear:
            cache_module.memory.clear()
            cache_module.failures.clear()
        with pytest.raises(cl.CompileError) as again:
            nvrtc.compile_source(BROKEN, arch=75, want_cubin=True)
        assert str(again.value) == str(first.value) and again.value.diagnostics == first.value.diagnostics


def test_a_failure_is_kept_per_file_name_and_a_transient_one_not_at_all(cache, monkeypatch):
    nvrtc, tmp = cache
    with pytest.raises(cl.CompileError):
        nvrtc.compile_source(BROKEN, filename="a.cu")
    with pytest.raises(cl.CompileError) as other:            # its log names b.cu, not a.cu
        nvrtc.compile_source(BROKEN, filename="b.cu")
    assert "b.cu" in str(other.value) and "a.cu" not in str(other.value)
    calls = []

    def out_of_memory(self, *args, **kwargs):
        calls.append(1)
        raise nvrtc.nvrtc_lib.Failed("NVRTC: out of memory", status=1)
    monkeypatch.setattr(nvrtc.nvrtc_lib.Library, "compile", out_of_memory)
    kept = set(tmp.glob("*.failed"))
    for n in range(2):
        with pytest.raises(cl.CompileError):
            nvrtc.compile_source(SRC % 7, arch=75, want_cubin=True)
        assert len(calls) == n + 1                           # not kept: the next call asks NVRTC again
    assert set(tmp.glob("*.failed")) == kept


@pytest.mark.parametrize("damage", ["{", "[]", '{"log": 3}', "log edited"])
def test_a_damaged_failure_entry_is_compiled_again_and_says_so(cache, capsys, damage):
    nvrtc, tmp = cache
    with pytest.raises(cl.CompileError) as first:
        nvrtc.compile_source(BROKEN, arch=75, want_cubin=True)
    (entry,) = tmp.glob("*.failed")
    good = json.loads(entry.read_text())
    entry.write_text(json.dumps({**good, "log": good["log"] + "x"}) if damage == "log edited" else damage)
    cache_module.memory.clear()
    cache_module.failures.clear()
    capsys.readouterr()
    with pytest.raises(cl.CompileError) as again:
        nvrtc.compile_source(BROKEN, arch=75, want_cubin=True)
    assert str(again.value) == str(first.value)
    (line,) = _warned(capsys)
    assert "damaged" in line and entry.name in line
    assert json.loads(entry.read_text()) == good


def _unusable(kind, tmp_path, monkeypatch):
    if kind == "a file":
        (tmp_path / "cache").write_text("not a folder")
        return tmp_path / "cache", ["is a file, not a folder"]
    if kind == "under a file":
        (tmp_path / "file").write_text("not a folder")
        return tmp_path / "file" / "cache", ["cannot be made"]
    folder = tmp_path / "cache"
    folder.mkdir(mode=0o700)
    if hasattr(os, "geteuid") and os.geteuid() == 0:          # root writes anywhere: the answer a user would get
        monkeypatch.setattr(cache_module, "_writable", lambda path: path != folder)
    else:
        os.chmod(folder, 0o500)
    return folder, ["is not writable"]


@pytest.mark.parametrize("kind", ["a file", "under a file", "not writable"])
def test_a_cache_that_cannot_be_used_says_so_once_in_one_line_with_the_fix(tmp_path, monkeypatch, capsys, kind):
    """Before: nothing at all; `capability` then compiled everything for 200 s without a word."""
    folder, words = _unusable(kind, tmp_path, monkeypatch)
    monkeypatch.setattr(cache_module, "CACHE_DIR", folder)
    monkeypatch.setattr(cache_module, "memory", {})
    monkeypatch.setattr(cache_module, "failures", {})
    monkeypatch.setattr(cache_module, "said", set())
    capsys.readouterr()
    for n in range(2):
        c = nvrtc.compile_source(SRC % (1000 + n))           # still compiles, uncached
        assert c.entries == ["k"]
    (line,) = _warned(capsys)                                 # once, not per compilation
    assert line.startswith("course_lib: ") and str(folder) in line and "COURSE_LIB_CACHE" in line
    assert "not kept" in line
    for w in words:
        assert w in line, (w, line)


def test_the_simulator_s_compilation_is_the_h100_s_cubin_made_once(cache, monkeypatch):
    """With machine code, the simulator's compilation is NVRTC 13's sm_90 CUBIN: the GPU's CUBIN for an H100 (and
    the capability table's sm_90 column) is that same entry, not a second NVRTC call with the same options."""
    nvrtc, tmp = cache
    if nvrtc.machine_code_missing():
        pytest.skip(nvrtc.machine_code_missing())
    from course_lib.compile import nvrtc_lib
    simulated = nvrtc.compile_source(SCALE)
    assert simulated.machine.startswith("NVRTC 13") and simulated.cubin
    monkeypatch.setattr(nvrtc_lib.Library, "_compile", lambda *a, **k: pytest.fail("NVRTC asked again"))
    h100 = nvrtc.compile_source(SCALE, arch=90, want_cubin=True)
    assert h100.cubin == simulated.cubin and h100.ptx == simulated.ptx
    cache_module.memory.clear()                          # a new process: the disk entry answers both
    assert nvrtc.compile_source(SCALE, arch=90, want_cubin=True).cubin == simulated.cubin
    assert nvrtc.compile_source(SCALE).machine == simulated.machine


CONCURRENT = '''
import sys
from course_lib.compile import nvrtc, nvrtc_lib
calls = []
compile_ = nvrtc_lib.Library.compile
nvrtc_lib.Library.compile = lambda self, *a, **k: calls.append(1) or compile_(self, *a, **k)
sys.stdin.readline()                       # all start together
nvrtc.compile_source(sys.argv[1])
print(len(calls))
'''


def test_processes_that_miss_the_same_entry_at_once_compile_it_once(tmp_path):
    """Three processes (a test run's workers, a user's notebooks) start cold on one kernel: one compiles it,
    the others wait for its entry (cache_lock.making) instead of each compiling the same thing."""
    import subprocess
    import sys
    source = "#include <cuda/barrier>\n" + SCALE.replace("scale", "scale_concurrently")   # a second to compile
    env = dict(os.environ, COURSE_LIB_CACHE=str(tmp_path))
    procs = [subprocess.Popen([sys.executable, "-c", CONCURRENT, source], env=env, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True) for _ in range(3)]
    time.sleep(1.0)                          # each has imported course_lib and waits on its stdin
    for p in procs:
        p.stdin.write("go\n")
        p.stdin.flush()
    outs = [p.communicate(timeout=120)[0] for p in procs]
    assert sum(int(o.split()[-1]) for o in outs) == 1, outs
    assert not list(tmp_path.glob("*.lock")), "a lock file stays behind"


def test_a_maker_that_holds_its_entry_too_long_is_not_waited_for(cache, monkeypatch):
    """A process that hangs while compiling (or holds the lock) delays another by MAKING_WAIT_S at most; then
    it compiles the entry itself."""
    import fcntl
    nvrtc, tmp = cache
    monkeypatch.setattr(cache_lock, "MAKING_WAIT_S", 0.2)
    key_source = SCALE.replace("scale", "scale_held")
    held = []
    real_making = cache_lock.making

    def hold_then_make(k):                   # another process holds k's lock the whole time
        fd = os.open(tmp / f"{k}.lock", os.O_CREAT | os.O_RDWR, 0o600)
        other = os.open(tmp / f"{k}.lock", os.O_RDWR)
        fcntl.flock(other, fcntl.LOCK_EX)    # a second open file description: as another process's
        held.append(fd)
        return real_making(k)
    monkeypatch.setattr(cache_lock, "making", hold_then_make)
    c = nvrtc.compile_source(key_source)
    assert "scale_held" in c.ptx and held
