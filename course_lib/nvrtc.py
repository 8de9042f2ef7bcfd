"""NVRTC and CuPy internals, kept in one place.

What this module does:
- compiles CUDA C++ source in-process with NVRTC (through CuPy's bindings, which load the
  ``nvidia-cuda-nvrtc`` wheel, so no CUDA toolkit and no GPU are needed) to PTX with line
  information, which is what the CPU simulator interprets;
- for the simulator, when NVRTC 13 and nvdisasm are installed (``nvrtc13.py``, ``sass.py``),
  compiles instead with NVRTC 13 for the H100 (sm_90) to PTX *and* a CUBIN in one call, so the
  simulator runs the very PTX whose machine code it reads to count what the GPU counts
  (``sim/fusion.py``); otherwise it falls back to CuPy's NVRTC and says why in
  ``Compiled.machine_note`` (``COURSE_LIB_SASS=0`` chooses the fallback);
- on a machine with a GPU, also compiles to a CUBIN for that exact device (``sm_XY``), so the
  driver never has to JIT PTX that is newer than itself — the usual reason CUDA notebooks break
  on Colab;
- caches results in memory and on disk, keyed by everything that can change the output;
- turns NVRTC's log into :class:`~course_lib.errors.CompileError` with line, column and caret;
- answers "is there a usable GPU?" and the device's properties.

What it does not do: launch kernels (``gpu.py``), validate arguments (``launch.py``) or
simulate (``sim/``).
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from . import nvrtc13, platforms, sass
from .errors import CompileError, NoGPUError, caret_excerpt

# The simulator models Volta..Hopper memory rules and is validated on an H100, so without a
# GPU we ask NVRTC for PTX of that machine.
SIMULATED_ARCH = 90
# The GPU whose machine code the simulator reads: the H100 its counts are checked against.
MACHINE_ARCH = 90
CACHE_DIR = Path(os.environ.get("COURSE_LIB_CACHE", Path.home() / ".cache" / "course_lib"))


@dataclass
class Compiled:
    """What one NVRTC compilation produced."""
    ptx: str
    cubin: bytes | None
    lowered_names: dict[str, str]
    log: str
    arch: int
    entries: list[str] = field(default_factory=list)
    machine: str = ""        # for the simulator: who made ``cubin`` ("NVRTC 13.0, sm_90"), "" if none
    machine_note: str = ""   # why the simulator has no machine code for this source


def _nvrtc():
    try:
        from cupy_backends.cuda.libs import nvrtc
    except ImportError as exc:  # macOS (no wheels), or a broken install: say which, and what to do
        message, hint = platforms.compiler_missing(f"CuPy, which holds its bindings, is not installed ({exc})")
        raise CompileError(message, hint=hint) from None
    return nvrtc


@functools.lru_cache(maxsize=1)
def nvrtc_version() -> tuple[int, int]:
    bindings = _nvrtc()
    try:
        return tuple(bindings.getVersion())
    except Exception as exc:  # the wheel is missing: say what to install
        message, hint = platforms.compiler_missing(str(exc))
        raise CompileError(message, hint=hint) from None


@functools.lru_cache(maxsize=1)
def supported_archs() -> tuple[int, ...]:
    try:
        return tuple(int(a) for a in _nvrtc().getSupportedArchs())
    except Exception:
        return (SIMULATED_ARCH,)


def simulation_arch() -> int:
    archs = supported_archs()
    return SIMULATED_ARCH if SIMULATED_ARCH in archs else max(a for a in archs if a <= SIMULATED_ARCH)


# ----------------------------------------------------------------------------- GPU detection

@functools.lru_cache(maxsize=1)
def gpu_available() -> bool:
    """True when CuPy sees a CUDA device we can run on. ``COURSE_LIB_BACKEND=sim`` forces False."""
    if os.environ.get("COURSE_LIB_BACKEND", "").lower() in ("sim", "cpu", "simulator"):
        return False
    try:
        import cupy
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


@dataclass(frozen=True)
class DeviceInfo:
    name: str
    arch: int                 # e.g. 90 for sm_90
    sm_count: int
    peak_bandwidth: float     # bytes/s, from memory clock and bus width (DDR: x2)
    l2_bytes: int
    max_threads_per_block: int
    max_block_dims: tuple
    max_grid_dims: tuple
    shared_per_block: int     # default limit without opt-in
    shared_per_block_optin: int
    memory_bytes: int


@functools.lru_cache(maxsize=1)
def device_info() -> DeviceInfo:
    if not gpu_available():
        raise NoGPUError("No NVIDIA GPU is available on this machine.",
                         hint="use the simulator backend: course_lib.Simulator()")
    import cupy
    dev = cupy.cuda.Device()
    p = cupy.cuda.runtime.getDeviceProperties(dev.id)
    attrs = dev.attributes
    clock_khz = attrs.get("MemoryClockRate") or p.get("memoryClockRate", 0)
    bus_bits = attrs.get("GlobalMemoryBusWidth") or p.get("memoryBusWidth", 0)
    name = p["name"].decode() if isinstance(p["name"], bytes) else str(p["name"])
    return DeviceInfo(
        name=name, arch=int(p["major"]) * 10 + int(p["minor"]), sm_count=int(p["multiProcessorCount"]),
        peak_bandwidth=2.0 * clock_khz * 1e3 * bus_bits / 8, l2_bytes=int(p.get("l2CacheSize", 0)),
        max_threads_per_block=int(p["maxThreadsPerBlock"]), max_block_dims=tuple(p["maxThreadsDim"]),
        max_grid_dims=tuple(p["maxGridSize"]), shared_per_block=int(p["sharedMemPerBlock"]),
        shared_per_block_optin=int(attrs.get("MaxSharedMemoryPerBlockOptin", p["sharedMemPerBlock"])),
        memory_bytes=int(p.get("totalGlobalMem", 0)))


# ----------------------------------------------------------------------------- compiling

_memory_cache: dict[str, Compiled] = {}


def _cache_key(source, options, names, arch, want_cubin) -> str:
    blob = json.dumps([source, list(options), list(names), arch, want_cubin, nvrtc_version()])
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _private_cache_dir() -> Path | None:
    """CACHE_DIR, created private to this user (0700); None (memory cache only) when it belongs to
    someone else or others may write into it: a CUBIN planted there would run on the GPU as ours."""
    try:
        CACHE_DIR.mkdir(mode=0o700, parents=True, exist_ok=True)
        if hasattr(os, "getuid"):
            st = CACHE_DIR.stat()
            if st.st_uid != os.getuid():
                return None
            if st.st_mode & 0o077:       # made by an older course_lib, or with a lax umask
                os.chmod(CACHE_DIR, 0o700)
        return CACHE_DIR
    except OSError:
        return None


def _write_private(path: Path, data: bytes) -> None:
    """Write through a temporary file created 0600, then rename: readers never see half a file."""
    tmp = path.with_name(f"{path.name}.tmp{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_BINARY", 0), 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    tmp.replace(path)


def _disk_load(key) -> Compiled | None:
    """The cached compilation for `key`, or None if there is none or it cannot be trusted: not a
    JSON object, a field missing or of the wrong type, or PTX/CUBIN whose hash differs from the
    one stored with it (a truncated write, a disk error, an edit). A bad entry is deleted, so the
    caller recompiles and stores a good one instead of failing on it every time."""
    folder = _private_cache_dir()
    if folder is None:
        return None
    meta, blob = folder / f"{key}.json", folder / f"{key}.cubin"
    try:
        d = json.loads(meta.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return _discard(meta, blob)
    try:
        cubin = blob.read_bytes() if isinstance(d, dict) and d.get("has_cubin") is True else None
    except OSError:
        cubin = b""                                   # announced but unreadable: fails the hash below
    if not _trusted(d, cubin):
        return _discard(meta, blob)
    return Compiled(ptx=d["ptx"], cubin=cubin, lowered_names=d["lowered_names"], log=d["log"],
                    arch=d["arch"], entries=d["entries"])


def _trusted(d, cubin) -> bool:
    if not isinstance(d, dict):
        return False
    shapes = dict(ptx=str, lowered_names=dict, log=str, arch=int, entries=list, has_cubin=bool, ptx_sha256=str)
    if any(not isinstance(d.get(k), t) for k, t in shapes.items()):
        return False
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in d["lowered_names"].items()):
        return False
    if not all(isinstance(e, str) for e in d["entries"]) or _sha(d["ptx"].encode()) != d["ptx_sha256"]:
        return False
    return cubin is None or _sha(cubin) == d.get("cubin_sha256")


def _discard(*paths):
    for p in paths:
        try:
            p.unlink()
        except OSError:
            pass
    return None


def _disk_store(key, c: Compiled) -> None:
    """Write the entry: the CUBIN first, then the JSON with both hashes, each private to this user
    and through a temporary file renamed into place, so a reader never sees half an entry."""
    folder = _private_cache_dir()
    if folder is None:
        return
    try:
        d = dict(ptx=c.ptx, lowered_names=c.lowered_names, log=c.log, arch=c.arch,
                 entries=c.entries, has_cubin=c.cubin is not None, ptx_sha256=_sha(c.ptx.encode()))
        if c.cubin is not None:
            d["cubin_sha256"] = _sha(c.cubin)
            _write_private(folder / f"{key}.cubin", c.cubin)
        _write_private(folder / f"{key}.json", json.dumps(d).encode())
    except OSError:
        pass  # a read-only home (some JupyterHubs) only costs speed


def compile_source(source: str, *, options=(), name_expressions=(), filename="kernel.cu",
                   arch: int | None = None, want_cubin: bool = False) -> Compiled:
    """Compile with NVRTC. ``arch`` defaults to the simulated H100 (PTX only) or, with
    ``want_cubin``, the current GPU. Always adds ``-lineinfo`` so PTX maps back to source lines."""
    note = ""
    if arch is None and not want_cubin:
        note = machine_code_missing()
        if not note:
            try:
                return _compile_with_machine_code(source, options, name_expressions, filename)
            except nvrtc13.Failed as exc:
                # a genuine error fails below too, with CuPy's NVRTC's usual message
                first = next((ln for ln in exc.log.splitlines() if "error" in ln), exc.log.strip()[:200])
                note = f"NVRTC 13 could not compile this source ({first.strip()})"
    if arch is None:
        arch = device_info().arch if want_cubin else simulation_arch()
    opts = [o for o in options if not o.startswith(("--gpu-architecture", "-arch"))]
    opts += ["-lineinfo", f"--gpu-architecture={'sm' if want_cubin else 'compute'}_{arch}"]
    key = _cache_key(source, opts, name_expressions, arch, want_cubin) + "-" + _safe(filename)
    if key in _memory_cache:
        return _memory_cache[key]
    hit = _disk_load(key)
    if hit is None:
        hit = _compile_now(source, opts, name_expressions, filename, arch, want_cubin)
        _disk_store(key, hit)
    hit.machine_note = note
    _memory_cache[key] = hit
    return hit


def machine_code_missing() -> str:
    """Why the simulator cannot read machine code here ("" when it can)."""
    if os.environ.get("COURSE_LIB_SASS", "").lower() in ("0", "off", "no", "false"):
        return "COURSE_LIB_SASS=0 turns machine code off"
    try:
        nvrtc13.version()
        path = sass.nvdisasm_path()
        if path is None:
            return "nvdisasm was not found (pip install nvidia-cuda-nvdisasm)"
        sass.nvdisasm_version(path)
    except (nvrtc13.Unavailable, sass.Unavailable) as exc:
        return str(exc)
    return ""


def _compile_with_machine_code(source, options, names, filename) -> Compiled:
    """PTX and an sm_90 CUBIN from one NVRTC 13 compilation (cached like the PTX)."""
    opts = [o for o in options if not o.startswith(("--gpu-architecture", "-arch"))]
    opts += ["-lineinfo", f"--gpu-architecture=sm_{MACHINE_ARCH}"]
    made_by = "NVRTC {}.{}, sm_{}".format(*nvrtc13.version(), MACHINE_ARCH)
    key = (_cache_key(source, opts, names, MACHINE_ARCH, True) + "-" + _safe(made_by) + "-" + _safe(filename))
    if key in _memory_cache:
        return _memory_cache[key]
    hit = _disk_load(key)
    if hit is None or hit.cubin is None:
        out = nvrtc13.compile(source, filename, opts, names)
        hit = Compiled(ptx=out.ptx, cubin=out.cubin, lowered_names=out.lowered_names, log=out.log,
                       arch=MACHINE_ARCH, entries=re.findall(r"\.entry\s+([\w$]+)\s*\(", out.ptx))
        _disk_store(key, hit)
    hit.machine = made_by
    _memory_cache[key] = hit
    return hit


def machine_code(c: Compiled) -> dict:
    """Kernel name -> its SASS instructions (``course_lib.sass.Instruction``) for a compilation
    made for the simulator; raises ``sass.Unavailable`` when there is none (``c.machine_note``)."""
    if not c.machine or c.cubin is None:
        raise sass.Unavailable(c.machine_note or "this module was built from PTX text, so there is no machine code")
    return sass.kernels(c.cubin, _private_cache_dir())


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", os.path.basename(name))[:40]


def _compile_now(source, opts, names, filename, arch, want_cubin) -> Compiled:
    nvrtc = _nvrtc()
    nvrtc_version()  # raises a clear error if the library is missing
    prog = nvrtc.createProgram(source, filename, [], [])
    try:
        for n in names:
            nvrtc.addNameExpression(prog, n)
        try:
            nvrtc.compileProgram(prog, list(opts))
        except nvrtc.NVRTCError:
            raise compile_error(source, nvrtc.getProgramLog(prog), filename) from None
        log = nvrtc.getProgramLog(prog)
        ptx = nvrtc.getPTX(prog)
        ptx = ptx.decode() if isinstance(ptx, bytes) else ptx
        ptx = ptx.rstrip("\x00")
        cubin = bytes(nvrtc.getCUBIN(prog)) if want_cubin else None
        lowered = {n: _decode(nvrtc.getLoweredName(prog, n)) for n in names}
    finally:
        nvrtc.destroyProgram(prog)
    entries = re.findall(r"\.entry\s+([\w$]+)\s*\(", ptx)
    return Compiled(ptx=ptx, cubin=cubin, lowered_names=lowered, log=log, arch=arch, entries=entries)


def _decode(s):
    return s.decode() if isinstance(s, bytes) else s


_DIAG = re.compile(r"^(?P<file>.*?)\((?P<line>\d+)\): (?P<kind>error|warning|catastrophic error)\s*(?P<code>#\w+-\w)?:?\s*(?P<msg>.*)$")


def compile_error(source: str, log: str, filename: str) -> CompileError:
    """Turn NVRTC's log into one readable error: the first error with its caret, then a count."""
    lines = (log or "").splitlines()
    diags = []
    for i, text in enumerate(lines):
        m = _DIAG.match(text)
        if not m or m["kind"] == "warning":
            continue
        line, col = int(m["line"]), None
        # NVRTC echoes the source line indented by two spaces, then a caret line.
        if i + 2 < len(lines) and lines[i + 2].strip() == "^":
            col = lines[i + 2].index("^") - 1
        diags.append((line, col, m["msg"].strip()))
    if not diags:
        return CompileError(f"NVRTC could not compile {filename}:\n{log.strip()}", log=log)
    line, col, msg = diags[0]
    where = f"{filename}, line {line}" + (f", column {col}" if col else "")
    short = os.path.basename(filename)
    text = [f"{msg}  ({where})"]
    if 'expected a ";"' in msg:
        text.append(_line_before(source, line, col, short))
    text.append(caret_excerpt(source, line, col, short))
    if len(diags) > 1:
        more = "; ".join(f"line {ln}: {m}" for ln, _, m in diags[1:4])
        text.append(f"  {len(diags) - 1} more error(s) — {more}")
    src_lines = source.splitlines()
    return CompileError("\n".join(t for t in text if t), diagnostics=diags, log=log,
                        hint=_hint_for(msg, source),
                        filename=filename, line=None,
                        source_line=src_lines[line - 1] if 0 < line <= len(src_lines) else None)


def _line_before(source, line, col, filename) -> str:
    """When NVRTC's caret is at the start of a statement, the ';' is missing at the end of the
    previous line: show that line with a caret after it."""
    lines = source.splitlines()
    if not 1 <= line <= len(lines) or col is None:
        return ""
    text = lines[line - 1].expandtabs(4)
    if col - 1 > len(text) - len(text.lstrip()):
        return ""
    k = line - 1
    while k >= 1 and not lines[k - 1].strip():
        k -= 1
    prev = lines[k - 1].expandtabs(4).rstrip() if k >= 1 else ""
    if not prev or prev.endswith((";", "{", "}", ":", ",")) or prev.lstrip().startswith(("#", "//")):
        return ""
    head = f"  {filename}:{k} | "
    return f"{head}{prev}\n{' ' * (len(head) + len(prev))}^ the ';' is probably missing here"


CUDA_NAMES = ("threadIdx blockIdx blockDim gridDim warpSize __syncthreads __syncwarp __shfl_sync "
              "__shfl_down_sync __shfl_xor_sync __shfl_up_sync __ldg atomicAdd atomicSub atomicMax atomicMin "
              "atomicCAS atomicExch float2 float4 int2 int4 double2 make_float2 make_float4 make_int2 "
              "__float2half __half2float size_t printf min max fminf fmaxf sqrtf expf __restrict__ "
              "__shared__ __global__ __device__ __constant__ __forceinline__ unsigned").split()


def _did_you_mean(name: str, source: str) -> str | None:
    words = set(re.findall(r"[A-Za-z_]\w*", re.sub(r"//[^\n]*|/\*.*?\*/", "", source or "", flags=re.S)))
    cands = sorted((words | set(CUDA_NAMES)) - {name})
    lower = {c.lower(): c for c in cands}
    if name.lower() in lower:
        return lower[name.lower()]
    import difflib
    close = difflib.get_close_matches(name.lower(), list(lower), n=1, cutoff=0.75)
    return lower[close[0]] if close else None


def _hint_for(msg: str, source: str | None = None) -> str | None:
    m = msg.lower()
    if "expected a \";\"" in m:
        return "a statement is missing its ';' — often at the end of the line before the caret."
    if "is undefined" in m:
        name = re.search(r'"([^"]+)"', msg)
        guess = _did_you_mean(name[1], source) if name else None
        return ((f"did you mean '{guess}'? " if guess else "") +
                "check the spelling (C++ is case-sensitive), and that the name is declared before this line "
                "and in this scope.")
    if "modifiable lvalue" in m:
        return ("this assigns to something read-only: an element of a const pointer (the input array?) or a "
                "const variable. Did you mean to write to the output array?")
    if "cannot be used to initialize an entity of type" in m and "const" in m.split("cannot")[0]:
        return ("this drops 'const': the value points to read-only data (a const input), so the new pointer "
                "must be const too, e.g. const float* p = in;")
    if "no suitable" in m and "convert" in m:
        if re.search(r"(float|int|double|char|short|long)[1-4]\b", m):
            return ("a vector type (float4, int2, ...) is not built from one scalar: to load 4 floats at once "
                    "cast the pointer, reinterpret_cast<const float4*>(in)[i], or build one with make_float4(...)")
        return "the two types do not convert into each other; check the declared types and add an explicit cast."
    if "cannot be assigned to an entity of type" in m or "argument of type" in m:
        return "the types do not match; check pointer types (float* vs double*) and casts."
    if "too few arguments" in m or "too many arguments" in m:
        return "the call does not match the function's parameter list; count the arguments."
    if "cannot open source file" in m:
        return ("NVRTC finds files in kernels/ and, if the nvidia-cuda-runtime-cu12 wheel is installed, "
                "CUDA's headers; for moving 16-bit values a transpose can use unsigned short instead of __half.")
    return None
