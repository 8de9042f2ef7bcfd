"""Where NVRTC finds CUDA's headers: the include folders of the pip wheels, matched to the compiler.

    headers.include_options(13)     # ['--include-path=.../course_lib/compile/include',
                                    #  '--include-path=.../nvidia/cu13/include', '.../cu13/include/cccl']
    headers.missing_hint("cuda/pipeline", 13)   # what to install, or why it cannot be included

NVRTC knows the CUDA built-ins (threadIdx, __syncthreads, printf...) but opens no header by itself.
``cuda_pipeline.h``, ``cuda_awbarrier.h``, ``cuda_fp16.h`` & co. come in NVIDIA's runtime wheel and
``<cuda/pipeline>``, ``<cuda/barrier>``, ``<cuda/ptx>`` (CCCL, libcu++) in its CCCL wheel, one pair
per CUDA major version, laid out differently:

    NVRTC 13: nvidia-cuda-runtime==13.0.*   nvidia/cu13/include
              nvidia-cuda-cccl==13.0.*      nvidia/cu13/include/cccl
    NVRTC 12: nvidia-cuda-runtime-cu12      nvidia/cuda_runtime/include
              nvidia-cuda-cccl-cu12         nvidia/cuda_cccl/include

Headers of the other major version do not compile (CUDA 13's cuda_fp8.hpp uses macros NVRTC 12
lacks), so each compiler gets its own. Before them comes the course's own folder
(``compile/include``): its ``cuda.h`` declares only ``CUtensorMap``, the one type of the driver API
that device code uses (the real cuda.h declares host functions NVRTC refuses). A toolkit under
``CUDA_HOME``/``CUDA_PATH`` comes last.

Student code also includes the course's kernels (``#include "tile.cu"``), but never a solution:
:func:`course_kernels` gives a folder holding links to (or copies of) the top-level files of
kernels/ and nothing else, which ``RawModule`` puts on the include path instead of kernels/ itself
(kernels/solutions/ lies inside it, so ``#include "solutions/<key>.cu"`` reached an answer). The
rule is that no solution is ever under an include folder, wherever solutions live; a file named by
an absolute path can still be included, which is why teach/origin.py compares the *content* of
every file a kernel was compiled from with the course's kernels and solutions.

This module only finds (or makes) folders and words hints; ``nvrtc.py`` passes the options.
"""
from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import shutil
import tempfile
from pathlib import Path

from . import cache

OWN = Path(__file__).resolve().parent / "include"

# CUDA major version -> (wheel, folder under site-packages/nvidia) for the runtime and CCCL headers
WHEELS = {
    13: (("nvidia-cuda-runtime==13.0.*", "cu13/include"), ("nvidia-cuda-cccl==13.0.*", "cu13/include/cccl")),
    12: (("nvidia-cuda-runtime-cu12", "cuda_runtime/include"), ("nvidia-cuda-cccl-cu12", "cuda_cccl/include")),
}
# headers and the wheel part (0: runtime, 1: CCCL) that has them
CCCL_PREFIXES = ("cuda/", "cub/", "thrust/", "nv/")


@functools.lru_cache(maxsize=None)
def folders(major: int) -> tuple[Path, ...]:
    """Include folders for NVRTC `major`, in search order (only those that exist)."""
    found = [OWN]
    roots = _nvidia_roots()
    for _, sub in WHEELS.get(major, ()):
        found += [r / sub for r in roots if (r / sub).is_dir()][:1]
    for var in ("CUDA_HOME", "CUDA_PATH"):
        home = os.environ.get(var)
        if home and (Path(home) / "include").is_dir():
            found += [Path(home) / "include", *[p for p in [Path(home) / "include" / "cccl"] if p.is_dir()]]
    return tuple(dict.fromkeys(found))


def include_options(major: int) -> list[str]:
    return [f"--include-path={p}" for p in folders(major)]


def _nvidia_roots() -> list[Path]:
    spec = importlib.util.find_spec("nvidia")
    return [Path(p) for p in (spec.submodule_search_locations or [])] if spec else []


def wheel_for(header: str, major: int) -> str | None:
    """The pip requirement whose include folder holds `header` for NVRTC `major` (None: no wheel does)."""
    if major not in WHEELS:
        return None
    runtime, cccl = WHEELS[major]
    if header.startswith(CCCL_PREFIXES):
        return cccl[0]
    if header.startswith("cuda") or header.endswith((".hpp",)) or header in RUNTIME_EXTRA:
        return runtime[0]
    return None


RUNTIME_EXTRA = ("cooperative_groups.h", "sm_20_intrinsics.h", "sm_60_atomic_functions.h", "vector_types.h",
                 "mma.h", "crt/host_defines.h")


def missing_hint(header: str, major: int) -> str:
    """Why NVRTC could not open `header`, and what to do: install a wheel, check the spelling, or
    drop a host header."""
    wheel = wheel_for(header, major)
    if wheel is None:
        return (f"NVRTC searches kernels/ and the CUDA headers pip installed; {header} is in neither. A host "
                "header (iostream, vector, stdlib.h...) cannot be used in device code: remove the #include.")
    part = WHEELS[major][1 if header.startswith(CCCL_PREFIXES) else 0][1]
    installed = [r / part for r in _nvidia_roots() if (r / part).is_dir()]
    if installed:
        return (f"{header} is not among CUDA's headers for NVRTC {major} (searched {installed[0]}): check its "
                "spelling, e.g. <cuda/pipeline>, <cuda/barrier>, <cuda_pipeline.h>, <cuda.h> for CUtensorMap.")
    return (f"{header} comes with CUDA's headers for NVRTC {major}, which are not installed: pip install "
            f"'{wheel}' (reinstalling the course, pip install -e ., brings them).")


@functools.lru_cache(maxsize=None)
def course_kernels(folder: Path) -> Path:
    """A folder with the top-level .cu/.cuh/.h files of `folder` (links, or copies where links are
    refused) and no subfolder: what student code may #include. Kept under the private cache, named by
    a hash of the files' names, sizes and times, so the include option (part of the compile cache's
    key) stays the same from one process to the next; a fresh temporary folder without a cache."""
    files = sorted(p for p in Path(folder).iterdir() if p.is_file() and p.suffix in (".cu", ".cuh", ".h"))
    stamp = hashlib.sha256(repr([str(folder)] + [(p.name, p.stat().st_size, p.stat().st_mtime_ns)
                                                 for p in files]).encode()).hexdigest()[:16]
    home = cache.private_dir()
    if home is None:
        return _fill(Path(tempfile.mkdtemp(prefix="course_lib_include_")), files)
    target = home / "include" / stamp
    if target.is_dir() and sorted(p.name for p in target.iterdir()) == [p.name for p in files] \
            and not any(p.is_dir() for p in target.iterdir()):
        return target
    target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    tmp = _fill(Path(tempfile.mkdtemp(prefix=f"{stamp}.", dir=target.parent)), files)
    shutil.rmtree(target, ignore_errors=True)
    try:
        os.replace(tmp, target)
    except OSError:            # another process made it first: use theirs
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def _fill(into: Path, files) -> Path:
    for p in files:
        try:
            os.symlink(p, into / p.name)
        except OSError:
            shutil.copy2(p, into / p.name)
    return into
