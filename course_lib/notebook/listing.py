"""Text with an HTML face: a kernel's source annotated with its memory metrics, and metrics side by side.

    draw.listing(run)                 # the kernel's source, each memory line annotated
    draw.listing(run, view="sass")    # ... with each line's machine code (SimRun.listing)
    draw.table({"naive": run1, "tile": run2}, model_gpu="H100")

Every object here is an :class:`HTMLText`: HTML in JupyterLab, plain text for terminals and for
nbval, which compares the text. Counts come from the run (the simulator's rules); nothing here runs
a kernel.
"""
from __future__ import annotations

import html

from ..sim.results.code_view import body_end
from ..sim.results.metrics import LDGSTS_NAMES as LDGSTS
from ..sim.results.metrics import METRIC_NAMES as N
from ..transposes.model import predict
from .palette import BAD, OK


class HTMLText:
    """Something with an HTML face (JupyterLab) and a text face (terminals, nbval's text/plain)."""

    def __init__(self, html_: str, text: str):
        self.html, self.text = html_, text

    def _repr_html_(self):
        return self.html

    def __repr__(self):
        return self.text

    def sourced(self, source: str) -> "HTMLText":
        """This table with a first line saying where its numbers come from (issue 28), unless its
        text already says it ("measured on", "simulated", "modelled", "computed from")."""
        from .alt import PROVENANCE
        if PROVENANCE.search(self.text):
            return self
        return HTMLText(f"<p><i>{html.escape(source)}</i></p>{self.html}", f"{source}\n{self.text}")


def _note(rows) -> tuple[str, bool]:
    """'global st: 32.0 sectors/req; shared ld: 32.0 wavefronts/req (32-way)' for one line."""
    bits, good = [], True
    for space, op in (("global", "ld"), ("shared", "ldgsts"), ("shared", "st"), ("shared", "ld"), ("global", "st")):
        rs = [r for r in rows if r["space"] == space and r["op"] == op and r["requests"]]
        req = sum(r["requests"] for r in rs)
        if not req:
            continue
        if space == "global":
            ratio, ideal = sum(r["sectors"] for r in rs) / req, max(1, max(r["width"] for r in rs))
            good &= ratio <= 1.25 * ideal      # partial warps at the edges cost a little more
            bits.append(f"global {op}: {ratio:.1f} sectors/req")
        else:
            ratio, conflicts = sum(r["wavefronts"] for r in rs) / req, sum(r["conflicts"] for r in rs)
            good &= conflicts == 0
            bits.append(f"{'cp.async into shared' if op == 'ldgsts' else 'shared ' + op}: {ratio:.1f} wavefronts/req"
                        + (f", {conflicts / req:.1f} conflicts/req" if conflicts else " (no conflicts)"))
    return "; ".join(bits), good


def listing(run, *, lines: tuple | None = None, view: str = "source", memory_only: bool = False):
    """The kernel's source (the function that holds the memory lines) with each memory line
    annotated: sectors per request, shared wavefronts and conflicts; red where it is not ideal.
    ``view="sass"`` (or ``"ptx"``) adds under each line the machine (or PTX) instructions it
    compiled to, loads and stores with their counts and fused ones marked (``SimRun.listing``).

        draw.listing(backend.run("naive_row").sim)      # line 18: global st: 32.0 sectors/req
        draw.listing(run, view="sass", memory_only=True)
    """
    if view != "source":
        lo, hi = lines or (None, None)
        return run.listing(view=view, memory_only=memory_only,
                           lines=set(range(lo, hi + 1)) if lines else None)
    mem = sorted(run.by_line)
    src = run.source_lines
    if lines is None and mem:
        start = max((i for i in range(mem[0], 0, -1) if "__global__" in src[i - 1]), default=mem[0])
        lines = (start, body_end(src, start))
    lo, hi = lines or (1, len(src))
    lo, hi = max(1, lo), min(hi, len(src))          # a range past the file's end shows what there is
    rows_html, rows_text = [], []
    for n in range(lo, hi + 1):
        code = src[n - 1].rstrip()
        note, good = "", True
        if n in run.by_line:
            note, good = _note([r for r in run.instructions if r["line"] == n])
        color = OK if good else BAD
        rows_html.append(f"<span style='color:#999'>{n:4d}</span>  {html.escape(code)}"
                         + (f"  <span style='color:{color};font-weight:bold'>// {html.escape(note)}</span>" if note else ""))
        rows_text.append(f"{n:4d}  {code}" + (f"  // {note}" if note else ""))
    body = "\n".join(rows_html)
    return HTMLText(f"<pre style='font-size:12px;line-height:1.35'>{body}</pre>", "\n".join(rows_text))


def table(runs: dict, *, model_gpu: str | None = None) -> HTMLText:
    """Metrics side by side: {label: SimRun or backend Result}. With `model_gpu` ('H100'...),
    adds the modelled bandwidth column.

        draw.table({"naive": run1, "tile": run2}, model_gpu="H100")
    """
    cols = ["kernel", "ld sectors/req", "st sectors/req", "shared ld wf/req", "shared st wf/req",
            "bank conflicts", "races"] + ([f"model GB/s ({model_gpu})"] if model_gpu else [])
    rows = []
    for label, r in runs.items():
        run = getattr(r, "sim", None) or r
        m = run.metrics
        row = [label, f"{run.ratio('global', 'ld'):.1f}", f"{run.ratio('global', 'st'):.1f}",
               f"{run.ratio('shared', 'ld'):.1f}", f"{run.ratio('shared', 'st'):.1f}",
               str(m[N[("shared", "ld", "conflicts")]] + m[N[("shared", "st", "conflicts")]] + m.get(LDGSTS["conflicts"], 0)),
               str(len(run.races))]
        if model_gpu:
            row.append(f"{predict(run, model_gpu):.0f}")
        rows.append(row)
    widths = [max(len(c), *(len(r[i]) for r in rows)) for i, c in enumerate(cols)] if rows else [len(c) for c in cols]
    text = "\n".join("  ".join(v.rjust(w) if i else v.ljust(w) for i, (v, w) in enumerate(zip(r, widths)))
                     for r in [cols] + rows)
    head = "".join(f"<th>{html.escape(c)}</th>" for c in cols)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(v)}</td>" for v in r) + "</tr>" for r in rows)
    source = "counts simulated (H100 rules)" + (f"; model GB/s modelled for {model_gpu} from them (course_lib.model), "
                                                 "not measured" if model_gpu else "")
    return HTMLText(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>", text).sourced(source)
