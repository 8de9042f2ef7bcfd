"""How every notebook starts: ``cl.setup()`` registers ``%%cuda``, stores figures as JSON, shows the banner.

    backend = cl.setup()                     # the GPU if CuPy sees one, else the CPU simulator
    backend = cl.setup(cl.Simulator(model_gpu="T4"))
    cl.banner(backend)                       # the line naming the backend, HTML in JupyterLab

The banner says what the numbers below it are: measured on this GPU, or exact counts from the
simulator with bandwidths *modelled* for a named GPU; on a GPU, which notebooks it runs entirely and
where cells that need a newer one go to the simulator (``capability``). On a hub whose pull kept the
course's new version of a notebook beside the student's (course_lib.lab.student.keepboth), the banner says so.
"""
from __future__ import annotations

import html
import os
from pathlib import Path

from .. import gpu, paths
from ..transposes.backend import GPU, default_backend
from ..kernel import arch_fallback
from . import capability, draw, magic


class Banner:
    """The line every notebook opens with; HTML in JupyterLab, text elsewhere."""

    def __init__(self, text: str, gpu: bool):
        self.text, self.gpu = text, gpu

    def __repr__(self):
        return self.text

    def _repr_html_(self):
        color = "#2a9d8f" if self.gpu else "#457b9d"
        return (f"<div style='border-left:4px solid {color};padding:4px 10px;font-family:sans-serif'>"
                f"{html.escape(self.text).replace(chr(10), '<br>')}</div>")


def banner(backend=None) -> Banner:
    """'GPU: <name> · peak ... · copy ... measured' or the CPU simulator's line.

        cl.banner(cl.Simulator(model_gpu="T4"))   # CPU simulator: ... modelled for a T4 ...
    """
    backend = backend or default_backend()
    if isinstance(backend, GPU):
        info = gpu.info()
        peak = info.peak_bandwidth / 1e9
        copy = backend.copy_gbps(256 << 20)
        sm = arch_fallback.gpu_arch()
        older = f" · treated as sm_{sm} (COURSE_LIB_ARCH)" if sm != info.arch else ""
        return Banner(f"GPU: {info.name} (sm_{info.arch}, {info.sm_count} SMs) · peak {peak:.0f} GB/s (datasheet) · "
                      f"copy {copy:.0f} GB/s measured ({copy / peak:.0%} of peak){older}\n"
                      f"{capability.banner_line(sm)}", True)
    article = "an" if backend.model_gpu[0] in "AEFHILMNORSX" else "a"      # an H100, an A100, a T4
    return Banner(f"CPU simulator: metrics are exact; times are not measured. Bandwidths shown are "
                  f"modelled for {article} {backend.model_gpu} (course_lib.model), not measured.", False)


def course_version_beside(session: str | None = None, folder: Path | None = None) -> str | None:
    """The banner's line when the course's version of this notebook was kept beside the student's, or None.
    The notebook is JPY_SESSION_NAME (its path: JupyterLab's server tells the kernel), in `folder`
    (the kernel's working folder, the notebook's own)."""
    session = os.environ.get("JPY_SESSION_NAME") if session is None else session
    if not session:
        return None
    copies = paths.kept_beside(Path(folder or os.getcwd()) / Path(session).name, "course")
    if not copies:
        return None
    return (f"The course changed this notebook where you had: this one is yours, as you left it; the course's "
            f"version is beside it as {copies[-1].name}" + (f" (the newest of {len(copies)})" if len(copies) > 1 else ""))


def setup(backend=None, *, show_banner: bool = True, renderer: str | None = None):
    """Start a notebook: register %%cuda, store plotly figures as JSON only, show the banner.
    Returns the backend (the one given, or the default).

        backend = cl.setup()                       # or cl.setup(cl.Simulator(model_gpu="T4"))
    """
    draw.configure(renderer)
    magic.register()
    backend = backend or default_backend()
    if show_banner:
        b = banner(backend)
        beside = course_version_beside()
        b = Banner(f"{b.text}\n{beside}", b.gpu) if beside else b
        try:
            from IPython import get_ipython
            from IPython.display import display
            if get_ipython() is not None:
                display(b)
                return backend
        except ImportError:
            pass
        print(b)
    return backend
