"""CuPy-shaped front door: ``RawModule`` and ``Function``.

``RawModule(code=..., options=..., name_expressions=...)`` compiles lazily (and caches);
``get_function(name)`` returns a :class:`Function` that runs two ways:

- ``fn(grid, block, args, shared_mem=0)`` launches on the GPU exactly like a CuPy RawKernel
  (numpy arrays are copied to the device and back);
- ``fn.simulate(grid, block, args, shared_mem=0)`` runs the same PTX in the CPU simulator
  and returns a :class:`~course_lib.sim.result.SimRun` with Nsight-Compute-style metrics.

Sources can be text or a file in ``kernels/`` (``RawModule(path="tile")``), with ``defines``
turned into ``-D`` options. Template kernels may be asked for by expression (``"tile<32, 8>"``)
even when not listed in ``name_expressions``: the module recompiles with it added.
"""
from __future__ import annotations

import difflib
import re
from pathlib import Path

import numpy as np

from . import nvrtc, ptx
from .errors import KernelError, NoGPUError
from .launch import check_args, check_config, kernel_signature



def _kernels_dir() -> Path:
    """kernels/ beside the package in a checkout; inside it (course_lib/kernels) in a wheel."""
    here = Path(__file__).resolve().parent
    for candidate in (here.parent / "kernels", here / "kernels"):
        if candidate.is_dir():
            return candidate
    return here.parent / "kernels"


KERNELS_DIR = _kernels_dir()


class KernelNotFound(KernelError, KeyError):
    """get_function asked for a name the module does not define."""


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
            code = p.read_text()
            filename = filename or p.name
        self.code = code
        self.filename = filename or "kernel.cu"
        self.defines = dict(defines or {})
        self.options = tuple(options) + tuple(f"-D{k}={v}" for k, v in self.defines.items()) + (
            f"--include-path={KERNELS_DIR}",)
        self.name_expressions = tuple(name_expressions)
        self._compiled = None
        self._parsed = None
        self._functions = {}

    @classmethod
    def from_ptx(cls, ptx_text: str, code: str = "", filename: str = "kernel.cu"):
        """A module built from PTX someone else compiled (e.g. nvcc -ptx -lineinfo), for the
        simulator only; `code` is the source it came from, for line numbers in messages."""
        mod = cls(code=code, filename=filename)
        entries = re.findall(r"\.entry\s+([\w$]+)\s*\(", ptx_text)
        mod._compiled = nvrtc.Compiled(ptx=ptx_text, cubin=None, lowered_names={}, log="", arch=0, entries=entries)
        mod._parsed = ptx.parse(ptx_text, filename)
        return mod

    # ------------------------------------------------------------------ compiling
    def compile(self):
        """Compile now (to PTX for the simulator); raises CompileError with a caret."""
        if self._compiled is None:
            self._compiled = nvrtc.compile_source(self.code, options=self.options,
                                                  name_expressions=self.name_expressions, filename=self.filename)
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

    def cubin_for_gpu(self):
        return nvrtc.compile_source(self.code, options=self.options, name_expressions=self.name_expressions,
                                    filename=self.filename, want_cubin=True)

    def kernel_names(self) -> list[str]:
        self.compile()
        lowered = set(self._compiled.lowered_names.values())
        names = list(self.name_expressions)
        names += [e for e in self._compiled.entries if e not in lowered]
        return names

    def get_function(self, name: str) -> "Function":
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
        plain = [e for e in c.entries if _mangled_base(e) == name]
        if len(plain) == 1:
            return plain[0]
        if "<" in name:  # a template instance nobody listed: add it and recompile
            self.name_expressions += (name,)
            self._compiled = None
            self.compile()
            return self._compiled.lowered_names[name]
        bases = sorted({_mangled_base(e) or e for e in c.entries} | set(c.lowered_names))
        close = difflib.get_close_matches(name, bases, n=3, cutoff=0.5)
        raise KernelNotFound(
            f"the module has no kernel named '{name}'",
            hint=(f"did you mean {', '.join(repr(x) for x in close)}? " if close else "")
            + f"kernels in this module: {', '.join(bases) or 'none (is the function marked __global__?)'}")


def _mangled_base(entry: str) -> str | None:
    m = re.match(r"_Z(\d+)(\w+)", entry)
    if m and len(m[2]) >= int(m[1]):
        return m[2][:int(m[1])]
    return None


class Function:
    """One kernel of a RawModule, runnable on the GPU (call it) or the CPU (``simulate``)."""

    def __init__(self, module: RawModule, name: str, entry: str):
        self.module, self.name, self.entry = module, name, entry
        self.kernel = module.parsed.kernels[entry]
        self.signature = kernel_signature(module.code, name)
        self._gpu_function = None

    @property
    def static_shared_bytes(self) -> int:
        mod = self.module.parsed
        vars_ = list(self.kernel.variables.values()) + list(mod.variables.values())
        return sum(v.size for v in vars_ if v.space == "shared")

    def __repr__(self):
        sig = ", ".join(p.ctype + " " + p.name for p in self.signature) if self.signature else "..."
        return f"<course_lib.Function {self.name}({sig})>"

    # ------------------------------------------------------------------ GPU
    def __call__(self, grid, block, args, shared_mem=0, stream=None, *, guard=None):
        """Launch on the GPU. Unless ``guard=False`` (or ``course_lib.guard.ENABLED = False``),
        the launch's edge blocks are simulated first and a launch that would fault is refused
        with the simulator's diagnosis (see course_lib.guard); course kernels are not checked."""
        from . import gpu
        from . import guard as guarded
        if not nvrtc.gpu_available():
            raise NoGPUError(f"no NVIDIA GPU here to launch {self.name} on",
                             hint="use fn.simulate(grid, block, args) to run it in the CPU simulator")
        guarded.before_launch(self, grid, block, args, shared_mem, guard=guard, stream=stream, limits=gpu.limits())
        return gpu.launch(self, grid, block, args, shared_mem, stream)

    # ------------------------------------------------------------------ simulator
    def simulate(self, grid, block, args, shared_mem=0, *, check_races=True, max_steps=100_000,
                 timeout=8.0, trace_block=(0, 0, 0), progress=None, echo=True, blocks=None):
        """Run on the CPU simulator; arrays are updated in place. Returns a SimRun.

        ``timeout`` is per batch of blocks (up to 65,536 threads): a batch still running after
        that many seconds is stopped as a probable infinite loop. ``blocks=[(x, y, z), ...]``
        runs only those blocks of the grid."""
        from .sim import simulate
        g, b = check_config(grid, block, shared_mem, static_shared=self.static_shared_bytes,
                            maxntid=self.kernel.maxntid, kernel=self.name)
        args = check_args(args, self.kernel.params, self.signature, self.name)
        return simulate(self, g, b, args, shared_mem, check_races=check_races, max_steps=max_steps,
                        timeout=timeout, trace_block=trace_block, progress=progress, echo=echo, blocks=blocks)
