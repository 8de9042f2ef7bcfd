"""Which GPU generations have which instructions: the course's one table of per-architecture rules.

    archs.needs(ptx)              # (90, [Feature('TMA', ...)]): the oldest sm_XY that has every feature used
    archs.lacks(75, ptx)          # the features a T4 (sm_75) does not have, [] when it runs the PTX
    archs.describe(75)            # 'sm_75 (Turing: T4, RTX 20)'
    archs.simulated_note("Tesla T4", 75, features)   # the one line a notebook prints instead of an error

The course's kernels use a handful of instructions newer than Volta: ``ldmatrix``/``movmatrix``
(sm_75), ``cp.async`` and ``mbarrier`` (sm_80), and Hopper's ``stmatrix``, bulk copies, the
Tensor Memory Accelerator (``cp.async.bulk.tensor``), transaction-counted mbarriers and the
async-proxy fence (sm_90; Blackwell, sm_100 and sm_120, has them too). The PTX ISA names the
first target of each (PTX ISA, "Target ISA notes" of each instruction); :data:`FEATURES` holds
them, matched against PTX text. Which architecture *compiles* a source is the compiler's word,
not this table's (CUDA headers guard some functions by ``__CUDA_ARCH__``): the capability test
(tests/lessons/test_capability.py) compiles every course kernel for every architecture of
:data:`ARCHS` and holds the two to each other. This module reads text; it compiles nothing and
counts nothing (the simulator's counting rules are an H100's: docs/ARCHITECTURE.md says where
they knowingly follow it).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass

from ..errors import ArgumentError

ENV_ARCH = "COURSE_LIB_ARCH"       # "older card" mode: treat this GPU as sm_XY (PTX for compute_XY, JIT)


@dataclass(frozen=True)
class Arch:
    sm: int
    family: str
    cards: str

    def __str__(self):
        return f"sm_{self.sm} ({self.family}: {self.cards})"


ARCHS = {a.sm: a for a in (
    Arch(75, "Turing", "T4, RTX 20"),
    Arch(80, "Ampere", "A100"),
    Arch(86, "Ampere", "RTX 30, A10"),
    Arch(89, "Ada", "L4, RTX 40"),
    Arch(90, "Hopper", "H100, H200"),
    Arch(100, "Blackwell", "B200"),
    Arch(120, "Blackwell", "RTX 50"),
)}
OLDEST = min(ARCHS)


@dataclass(frozen=True)
class Feature:
    name: str          # what a student would call it
    pattern: str       # a PTX instruction that only exists from `sm` on
    sm: int
    what: str          # one phrase: what it does

    def __str__(self):
        return f"{self.name} ({self.what}; sm_{self.sm} and newer)"


FEATURES = (
    Feature("TMA", r"\bcp\.async\.bulk\.tensor\.", 90, "the Tensor Memory Accelerator, cp.async.bulk.tensor"),
    Feature("bulk copies", r"\bcp\.(?:async|reduce\.async)\.bulk\.(?!tensor)", 90, "cp.async.bulk"),
    Feature("stmatrix", r"\bstmatrix\.", 90, "warp-wide 8x8 matrix stores"),
    Feature("the async-proxy fence", r"\bfence\.proxy\.async\b", 90, "fence.proxy.async"),
    Feature("transaction-counted mbarriers", r"\bmbarrier\.[\w.]*expect_tx\b", 90, "mbarrier expect_tx"),
    Feature("cp.async", r"\bcp\.async\.c[ag]\.", 80, "asynchronous copies into shared memory"),
    Feature("mbarrier", r"\bmbarrier\.", 80, "barriers in shared memory"),
    Feature("ldmatrix", r"\bldmatrix\.", 75, "warp-wide 8x8 matrix loads"),
    Feature("movmatrix", r"\bmovmatrix\.", 75, "a warp-wide 8x8 transpose in registers"),
)


def _code(ptx: str) -> str:
    """PTX without comments: a kernel's name or a //-line must not count as an instruction."""
    return re.sub(r"//[^\n]*|/\*.*?\*/", "", ptx, flags=re.S)


def used(ptx: str) -> list[Feature]:
    """The features of :data:`FEATURES` the PTX uses, newest first."""
    code = _code(ptx)
    return [f for f in FEATURES if re.search(f.pattern, code)]


def needs(ptx: str) -> tuple[int, list[Feature]]:
    """(the oldest architecture of :data:`ARCHS` with every feature the PTX uses, those features that set it)."""
    found = used(ptx)
    sm = max([f.sm for f in found], default=OLDEST)
    return sm, [f for f in found if f.sm == sm and sm > OLDEST]


def lacks(sm: int, ptx: str) -> list[Feature]:
    """The features the PTX uses that a GPU of architecture `sm` does not have."""
    return [f for f in used(ptx) if f.sm > sm]


def describe(sm: int) -> str:
    return str(ARCHS[sm]) if sm in ARCHS else f"sm_{sm}"


def simulated_note(gpu_name: str, sm: int, missing) -> str:
    """The one line shown when a cell runs on the simulator because this GPU lacks what it uses."""
    names = ", ".join(f"{f.name} ({f.what}, sm_{f.sm}+)" for f in missing)
    card = gpu_name if gpu_name.startswith(f"sm_{sm} ") else f"{gpu_name} (sm_{sm})"
    return f"simulated as an H100: {_article(card)} {card} has no {names}"


def _article(name: str) -> str:
    return "an" if name[:1].upper() in "AEFHILMNORSX" else "a"


def pretended() -> int | None:
    """The architecture ``COURSE_LIB_ARCH`` asks the course to treat the GPU as ("older card" mode:
    kernels are compiled to PTX for compute_XY and JIT-compiled by the driver), or None."""
    raw = os.environ.get(ENV_ARCH, "").strip().lower().removeprefix("sm_").removeprefix("compute_")
    if not raw:
        return None
    if not raw.isdigit() or int(raw) not in ARCHS:
        raise ArgumentError(f"{ENV_ARCH}={os.environ[ENV_ARCH]!r} is not an architecture the course knows",
                            hint=f"one of {', '.join(f'{a}' for a in ARCHS)} (e.g. {ENV_ARCH}=75 for a T4), or unset it")
    return int(raw)
