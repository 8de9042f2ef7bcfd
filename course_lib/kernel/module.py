"""CuPy-shaped front door: ``RawModule`` and ``Function``.

``RawModule(code=..., options=..., name_expressions=...)`` compiles lazily (and caches);
``get_function(name)`` returns a :class:`Function` that runs two ways:

- ``fn(grid, block, args, shared_mem=0)`` launches on the GPU exactly like a CuPy RawKernel
  (numpy arrays are copied to the device and back);
- ``fn.simulate(grid, block, args, shared_mem=0)`` runs the same PTX in the CPU simulator
  and returns a :class:`~course_lib.sim.result.SimRun` with Nsight-Compute-style metrics.

Sources can be text or a file in ``kernels/`` (``RawModule(path="tile")``), with ``defines``
turned into ``-D`` options. The text is read once (``compile.source.read``; ``code=`` may be such a
``Source`` already, as ``%%cuda`` passes it) into ``module.source``, which names the kernels and
gives each Function its C++ parameter list; nothing here reads the text again. ``#include`` of a host header whose device part NVRTC builds in (``<cstdio>``, ``<cassert>``,
``<cmath>``, ``<cuda_runtime.h>`` ...) is dropped before compiling, so a kernel written for nvcc
compiles as is (the line stays, commented, so line numbers hold). Template kernels may be asked for
by expression (``"tile<32, 8>"``) even when not listed in ``name_expressions``: the module
recompiles with it added.
"""
from __future__ import annotations

import difflib
from pathlib import Path

import numpy as np

from .. import gpu, paths, sim
from ..compile import headers, nvrtc, ptx, source
from ..errors import ArgumentError, CompileError, KernelError, NoGPUError, NotFound, gives_memory_back
from ..sim.gc_pause import gc_paused
from ..sim.progress import Progress
from . import arch_fallback
from . import guard as guard_module
from . import launch as launches

KERNELS_DIR = paths.KERNELS


class KernelNotFound(NotFound):
    """get_function asked for a name the module does not define."""


def _read_source(p: Path) -> str:
    """A .cu file's text: UTF-8, else Latin-1 (an editor's default on some systems: a comment with
    an accent must not stop a kernel); a file with NUL bytes is not source at all."""
    data = p.read_bytes()
    if b"\0" in data:
        raise KernelError(f"{p} is not text: it holds NUL bytes (the first at byte {data.find(0)}), so it is not "
                          "CUDA source", hint="RawModule(path=...) takes a .cu file of C++ source, saved as UTF-8; a "
                                              "compiled file (.cubin, .o) cannot be read back into source")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("latin-1")


class RawModule:
    def __init__(self, code: str | None = None, options=(), name_expressions=(), *, path=None,
                 defines: dict | None = None, filename: str | None = None):
        if code is None and path is None:
            raise KernelError("RawModule needs code= (CUDA source text) or path= (a .cu file)")
        if path is not None:
            p = Path(path)
            if not p.exists() and (KERNELS_DIR / p).exists():
                p = KERNELS_DIR / p
            if not p.exists() and (KERNELS_DIR / f"{path}.cu").exists():
                p = KERNELS_DIR / f"{path}.cu"
            if not p.exists():
                known = sorted(f.stem for f in KERNELS_DIR.glob("*.cu"))
                raise KernelError(f"no kernel file '{path}'", hint=f"kernels/ has: {', '.join(known)}")
            code = _read_source(p)
            filename = filename or p.name
        if not isinstance(code, (str, source.Source)):
            raise ArgumentError(f"code= must be the CUDA source as a str, not {type(code).__name__}",
                                hint="RawModule(code=src) with src a string; or RawModule(path='file.cu')")
        self.source = code if isinstance(code, source.Source) else source.read(code)   # read once, here
        self.filename = filename or "kernel.cu"
        if defines is not None and not isinstance(defines, dict):
            raise ArgumentError(f"defines= must be a dict of macro names and values, not {type(defines).__name__}",
                                hint='e.g. defines={"TILE": 32}')
        self.defines = dict(defines or {})
        self.options = _strings(options, "options", '("-std=c++17", "-DTILE=32")') + tuple(
            f"-D{k}={v}" for k, v in self.defines.items()) + (
            f"--include-path={headers.course_kernels(KERNELS_DIR)}",)     # the course's kernels, no solutions
        self.name_expressions = _strings(name_expressions, "name_expressions", '["transpose<32, 1>"]')
        self._compiled = None
        self._parsed = None
        self._functions = {}

    @property
    def code(self) -> str:
        """The source as given (its line numbers are the ones messages show)."""
        return self.source.text

    @classmethod
    def from_ptx(cls, ptx_text: str, code: str = "", filename: str = "kernel.cu"):
        """A module built from PTX someone else compiled (e.g. nvcc -ptx -lineinfo), for the
        simulator only; `code` is the source it came from, for line numbers in messages."""
        mod = cls(code=code, filename=filename)
        entries = nvrtc.entries_of(ptx_text)
        mod._compiled = nvrtc.Compiled(ptx=ptx_text, cubin=None, lowered_names={}, log="", arch=0, entries=entries)
        mod._parsed = ptx.parse(ptx_text, filename)
        return mod

    # ------------------------------------------------------------------ compiling
    def compile(self):
        """Compile now (to PTX for the simulator); raises CompileError with a caret."""
        if self._compiled is None:
            self._compiled = nvrtc.compile_source(self.source.nvrtc, options=self.options,
                                                  name_expressions=self.name_expressions, filename=self.filename)
            with gc_paused():         # thousands of objects that live as long as the module (sim.gc_pause says why)
                self._parsed = ptx.parse(self._compiled.ptx, self.filename)
        return self

    @property
    def ptx(self) -> str:
        return self.compile()._compiled.ptx

    @property
    def parsed(self) -> ptx.Module:
        return self.compile()._parsed

    @property
    def compiled(self) -> nvrtc.Compiled:
        """What NVRTC made: the PTX, and for the simulator the CUBIN whose machine code it reads."""
        return self.compile()._compiled

    def cubin_for(self, arch: int, max_major: int | None = None) -> nvrtc.Compiled:
        """A CUBIN for a GPU of architecture `arch` (sm_XY), from an NVRTC no newer than `max_major`."""
        return nvrtc.compile_source(self.source.nvrtc, options=self.options,
                                    name_expressions=self.name_expressions, filename=self.filename,
                                    arch=arch, want_cubin=True, max_major=max_major)

    def ptx_for(self, arch: int) -> nvrtc.Compiled:
        """PTX for compute_`arch` (what a GPU of that generation's driver JIT-compiles; the capability table
        and "older card" mode use it). Raises CompileError where the source does not compile for it."""
        return nvrtc.compile_source(self.source.nvrtc, options=self.options,
                                    name_expressions=self.name_expressions, filename=self.filename, arch=arch)

    def kernel_names(self) -> list[str]:
        self.compile()
        lowered = set(self._compiled.lowered_names.values())
        names = list(self.name_expressions)
        names += [e for e in self._compiled.entries if e not in lowered]
        return names

    def get_function(self, name: str) -> "Function":
        if not isinstance(name, str):
            raise ArgumentError(f"get_function needs the kernel's name as a str, not {type(name).__name__}",
                                hint="e.g. get_function('transpose'); this module has: "
                                     + ", ".join(source.mangled_base(n) or n for n in self.kernel_names()))
        if name in self._functions:
            return self._functions[name]
        self.compile()
        entry = self._resolve(name)
        fn = Function(self, name, entry)
        self._functions[name] = fn
        return fn

    def _resolve(self, name):
        c = self._compiled
        if name in c.lowered_names:
            return c.lowered_names[name]
        if name in c.entries:
            return name
        plain = [e for e in c.entries if source.mangled_base(e) == name]
        if len(plain) == 1:
            return plain[0]
        if "<" in name:  # a template instance nobody listed: add it and recompile
            self.name_expressions += (name,)
            self._compiled = None
            self.compile()
            return self._compiled.lowered_names[name]
        if self.source.is_template(name):
            example = self.source.signature(name)
            raise KernelNotFound(
                f"'{name}' is a template kernel, and a template is compiled only for the arguments asked for",
                hint=f"ask for one instance, e.g. get_function('{name}<float, 32>') with its template "
                     f"arguments, or list it in name_expressions=['{name}<float, 32>']"
                     + ("" if example is None else f" ({name} takes " + ", ".join(map(str, example)) + ")"))
        bases = sorted({source.mangled_base(e) or e for e in c.entries} | set(c.lowered_names))
        close = difflib.get_close_matches(name, bases, n=3, cutoff=0.5)
        raise KernelNotFound(
            f"the module has no kernel named '{name}'",
            hint=(f"did you mean {', '.join(repr(x) for x in close)}? " if close else "")
            + f"kernels in this module: {', '.join(bases) or 'none (is the function marked __global__?)'}")


def _strings(value, what, example) -> tuple:
    """A tuple of str from a tuple/list of str; a bare str is refused, since tuple("-O3") would
    split it into characters (like CuPy, NVRTC takes one option or name per item)."""
    if value is None:
        return ()
    if isinstance(value, (str, bytes)):
        raise ArgumentError(f"{what}={value!r} is one string; {what} takes a tuple or list of strings",
                            hint=f"{what}=({value!r},) — or several, e.g. {what}={example}")
    try:
        items = tuple(value)
    except TypeError:
        raise ArgumentError(f"{what} must be a tuple or list of strings, not {type(value).__name__}",
                            hint=f"e.g. {what}={example}") from None
    bad = [v for v in items if not isinstance(v, str)]
    if bad:
        raise ArgumentError(f"{what}: every item must be a str, but {bad[0]!r} is a {type(bad[0]).__name__}",
                            hint=f"e.g. {what}={example}")
    return items


class Template:
    """A template kernel nobody instantiated yet; index it to compile one instance.

        tile[np.float32, 32, 8]        # -> the Function for tile<float, 32, 8>
        tile["float", 32, 8]           # the same
    """

    def __init__(self, module: RawModule, name: str):
        self.module, self.name = module, name

    def __getitem__(self, args) -> "Function":
        args = args if isinstance(args, tuple) else (args,)
        return self.module.get_function(f"{self.name}<{', '.join(source.template_arg(a) for a in args)}>")

    def __repr__(self):
        return f"<template kernel {self.name}: index it to compile one, e.g. {self.name}[np.float32, 32]>"


class Function:
    """One kernel of a RawModule, runnable on the GPU (call it) or the CPU (``simulate``)."""

    def __init__(self, module: RawModule, name: str, entry: str):
        self.module, self.name, self.entry = module, name, entry
        self.kernel = module.parsed.kernels[entry]
        self.signature = module.source.signature(name)
        self._gpu_function = None

    @property
    def static_shared_bytes(self) -> int:
        mod = self.module.parsed
        vars_ = list(self.kernel.variables.values()) + list(mod.variables.values())
        return sum(v.size for v in vars_ if v.space == "shared")

    def __repr__(self):
        sig = ", ".join(map(str, self.signature)) if self.signature else "..."
        return f"<course_lib.Function {self.name}({sig})>"

    def check_launch(self, grid, block, args, shared_mem=0, *, limits=None) -> launches.Launch:
        """The one launch check (``kernel.launch.check``): a Launch, or a LaunchError/ArgumentError."""
        return launches.check(self, grid, block, args, shared_mem, limits=limits)

    # ------------------------------------------------------------------ GPU
    def __call__(self, grid, block, args, shared_mem=0, stream=None, *, guard=None):
        """Launch on the GPU. Unless ``guard=False`` (or ``cl.guard.ENABLED = False``), the launch's
        edge blocks are simulated first and a launch that would fault is refused with the
        simulator's diagnosis (see ``kernel.guard``); course kernels are not checked. A kernel this GPU
        cannot run (notebook 12's TMA on a T4) runs on the simulator instead, with one line saying why."""
        if not gpu.available():
            raise NoGPUError(f"no NVIDIA GPU here to launch {self.name} on",
                             hint="use fn.simulate(grid, block, args) to run it in the CPU simulator")
        checked = self.check_launch(grid, block, args, shared_mem, limits=gpu.limits())
        guard_module.before_launch(self, checked, guard=guard, stream=stream)
        try:
            return gpu.launch(self, checked, stream)
        except CompileError as exc:     # this GPU's compiler refuses it (a T4 has no TMA): simulate, say why
            return arch_fallback.simulate(self, checked, arch_fallback.reason(self, exc))

    # ------------------------------------------------------------------ simulator
    @gives_memory_back
    def simulate(self, grid, block, args, shared_mem=0, *, check_races=True, max_steps=100_000,
                 timeout=8.0, trace_block=(0, 0, 0), progress=True, echo=True, blocks=None,
                 max_work=None):
        """Run on the CPU simulator; arrays are updated in place. Returns a SimRun.

        ``blocks=[(x, y, z), ...]`` runs only those blocks of the grid. Limits, each named with its
        value when reached: ``max_steps`` and ``timeout`` (seconds of this thread's CPU time, so a
        busy machine changes no verdict) per batch of blocks (up to 65,536 threads), so an infinite
        loop stops; ``max_work`` (thread-steps, default
        ``course_lib.sim.plan.MAX_WORK``, about 45 s) for the whole launch, checked before it
        starts and after its first batch. ``progress``: a display of blocks done for runs longer
        than two seconds (False: none; or any callable(done, total))."""
        checked = self.check_launch(grid, block, args, shared_mem)
        for name, value in (("max_steps", max_steps), ("timeout", timeout), ("max_work", max_work)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float, np.number))
                                      or not value > 0):
                raise ArgumentError(f"{name}={value!r}: a limit must be a number above 0",
                                    hint=f"leave {name}= out for the default, or pass a larger number to wait longer")
        if progress is True:
            progress = Progress(f"simulating {self.name}")
        elif progress is not False and progress is not None and not callable(progress):
            raise ArgumentError(f"progress={progress!r}: pass True, False, or a callable(done, total)")
        return sim.simulate(self, checked, check_races=check_races, max_steps=max_steps, timeout=timeout,
                            trace_block=trace_block, progress=progress or None, echo=echo, blocks=blocks,
                            max_work=sim.plan.MAX_WORK if max_work is None else max_work)
