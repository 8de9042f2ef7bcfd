"""A simulated run's source view: each source line with what it compiled to and what it cost.

Three views of one :class:`~course_lib.sim.results.result.SimRun` (``run.listing(view=...)``):

- ``"source"`` (the default): every line of the source, memory lines annotated with their counts;
- ``"ptx"``: the kernel's lines, each followed by its PTX instructions; a load or store shows
  its space, width and counts, and the machine instruction it became (or was fused into);
- ``"sass"``: the kernel's lines, each followed by its machine instructions, as Nsight Compute's
  source view shows them on a GPU: a load or store shows its width and counts, and a fused one
  the PTX accesses it stands for.

The result is a :class:`Listing`: text (print it in a terminal) that a notebook shows as HTML,
with costly accesses in red and fused ones marked. This module only formats what the run and
its fusion plan (``sim/fusion.py``) hold; it computes no metric.
"""
from __future__ import annotations

import bisect
import html

from ...errors import KernelError
from .metrics import access_width, annotate

OK, BAD, FUSED, DIM = "#2a9d8f", "#e63946", "#6d597a", "#8a8a8a"
VIEWS = ("source", "ptx", "sass")


class Listing(str):
    """Text with an HTML face: ``print(listing)`` in a terminal, coloured in a notebook."""

    def __new__(cls, text: str, html_: str):
        self = super().__new__(cls, text)
        self.html = html_
        return self

    def _repr_html_(self):
        return self.html

    def __repr__(self):
        return str(self)


def render(run, view="source", *, lines=None, memory_only=False) -> Listing:
    if view not in VIEWS:
        raise KernelError(f"listing(view={view!r}) is not a view", hint=f"views: {', '.join(map(repr, VIEWS))}")
    rows = _source_rows(run, lines) if view == "source" else _code_rows(run, view, lines, memory_only)
    text = "\n".join(r[1] for r in rows)
    body = "\n".join(_html_row(*r) for r in rows)
    return Listing(text, f"<pre style='font-size:12px;line-height:1.35'>{body}</pre>")


# ----------------------------------------------------------------------------- rows
# A row is (kind, text, colour, html_text): kind 'source' | 'code' | 'note'.

def _source_rows(run, lines):
    out = []
    for n, text in enumerate(run.source_lines, 1):
        if lines and n not in lines:
            continue
        note = annotate(run.by_line[n]) if n in run.by_line else ""
        bad = note and any(r["conflicts"] or _global_excess(r) for r in run.instructions if r["line"] == n)
        out.append(("source", f"{n:4d}  {text.rstrip():<60s}{'  // ' + note if note else ''}",
                    (BAD if bad else OK) if note else "", None))
    return out


def _code_rows(run, view, lines, memory_only):
    plan, kernel = (run.machine.full() if run.machine is not None else None), run.kernel
    rows_of = {}
    for r in run.instructions:
        rows_of.setdefault(r["pc"], []).append(r)
    if view == "sass":
        if plan is None or plan.note or not plan.sass:
            why = plan.note if plan is not None and plan.note else "the run has no machine code"
            return [("note", f"// no machine code to show: {why}", BAD, None)]
        code = _sass_by_line(plan, kernel)
    else:
        code = {}
        for ins in kernel.instructions:
            code.setdefault(ins.line, []).append(ins)
    out = [("note", _header(run, view), DIM, None)]
    shown = _kernel_lines(run, code)
    for n in sorted(set(shown) | ({0} & set(code))):
        if lines and n not in lines:
            continue
        if n:
            out.append(("source", f"{n:4d}  {run.source_lines[n - 1].rstrip()}" if n <= len(run.source_lines)
                        else f"{n:4d}", "", None))
        elif code.get(0):
            out.append(("source", "      (no source line)", DIM, None))
        seen = set()
        for item in code.get(n, []):
            row = (_sass_row(item, plan, kernel, rows_of, seen) if view == "sass"
                   else _ptx_row(item, plan, kernel, rows_of))
            if row is not None and (not memory_only or row[2] != DIM):
                out.append(row)
    return out


def _header(run, view):
    plan = run.machine.full() if run.machine is not None else None
    if plan is None or plan.note:
        return f"// {view.upper()} of {run.kernel.name}; metrics follow the PTX" + (f" ({plan.note})" if plan else "")
    fused = plan.fused_groups
    return (f"// {view.upper()} of {run.kernel.name}, machine code from {plan.made_by or 'nvdisasm'}: "
            f"{len(fused)} fused load/store instruction(s)")


def _kernel_lines(run, code):
    """The kernel's own lines (declaration to closing brace) and any other line with code."""
    with_code = sorted(n for n in code if n)
    if not with_code:
        return []
    src = run.source_lines
    first = next((ins.line for ins in run.kernel.instructions if ins.line), with_code[0])
    start = next((i for i in range(first, max(first - 4, 0), -1) if "__global__" in src[i - 1]), first)
    return sorted(set(range(start, body_end(src, start) + 1)) | set(with_code))


def body_end(src, start: int) -> int:
    """The (1-based) line that closes the braces opened from line `start` on: a kernel's last line."""
    end, depth, opened = start, 0, False
    while end <= len(src):
        depth += src[end - 1].count("{") - src[end - 1].count("}")
        opened |= "{" in src[end - 1]
        if opened and depth <= 0:
            break
        end += 1
    return min(end, len(src))


def _sass_by_line(plan, kernel):
    """Source line -> SASS instructions, through the PTX line each one names."""
    known = sorted(plan.pc_of_line)
    out = {}
    for s in plan.sass:
        if s.opcode == "NOP":          # padding after the last instruction
            continue
        pc = plan.pc_of_line.get(s.ptx_line)
        if pc is None and known:       # a directive's line: the instruction before it
            k = bisect.bisect_right(known, s.ptx_line) - 1
            pc = plan.pc_of_line[known[max(k, 0)]]
        line = kernel.instructions[pc].line if pc is not None else 0
        out.setdefault(line, []).append(s)
    return out


def _sass_row(s, plan, kernel, rows_of, seen):
    text = f"        {s.address:04x}  {s.text}"
    if s.access is None or s.access.space == "local":
        return ("code", text, DIM, None)
    a = s.access
    desc = f"{a.space} {a.op} {a.width} B"
    pc = plan.pc_of_line.get(s.ptx_line)
    g = plan.group_of.get(pc)
    if g is None or s not in g.sass:
        return ("code", f"{text:<52}  // {desc}: counted as the PTX has it (not matched)", BAD, None)
    if g.leader in seen:
        return ("code", f"{text:<52}  // {desc}: the same PTX access as above", DIM, None)
    seen.add(g.leader)
    counts, bad = _counts(rows_of.get(g.leader, []))
    if g.width < access_width(kernel.instructions[g.leader]):
        lead = kernel.instructions[g.leader]
        return ("code", f"{text:<52}  // {desc}: {g.width} of the {access_width(lead)} bytes of PTX "
                f"`{' '.join(lead.text.split())}` (+{g.shift}); {counts}", BAD if bad else FUSED, "fused")
    if g.fused:
        members = [kernel.instructions[m] for m in g.members]
        verb = "fuses" if g.width > min(access_width(m) for m in members) else "merges (same address)"
        what = f"{verb} {len(members)} PTX {_op_names(members)}: {_offsets(members)}"
        lines = sorted({m.line for m in members})
        if len(lines) > 1:
            what += f" (lines {', '.join(map(str, lines))})"
        return ("code", f"{text:<52}  // {desc}, {what}; {counts}", BAD if bad else FUSED, "fused")
    return ("code", f"{text:<52}  // {desc}; {counts}", BAD if bad else OK, None)


def _ptx_row(ins, plan, kernel, rows_of):
    text = "        " + " ".join(ins.text.split())
    in_plan = plan is not None and ins.index in plan.group_of
    if ins.opcode not in ("ld", "ldu", "st") or not (ins.index in rows_of or in_plan):
        return ("code", text, DIM, None)
    width = (rows_of.get(ins.index) or [{}])[0].get("width")
    g = plan.group_of.get(ins.index) if plan is not None else None
    counts, bad = _counts(rows_of.get(ins.index, []))
    if g is None:
        note = counts or "not executed"
        if plan is not None and not plan.note:
            note += " (no machine instruction matched)"
        return ("code", f"{text:<52}  // {note}", BAD if bad else OK, None)
    s = g.sass[0].text
    if not g.fused:
        return ("code", f"{text:<52}  // {s}; {counts or 'not executed'}", BAD if bad else OK, None)
    if ins.index == g.leader:
        return ("code", f"{text:<52}  // fused: {s} ({width} B) with {len(g.members) - 1} more; "
                f"{counts or 'not executed'}", BAD if bad else FUSED, "fused")
    lead = kernel.instructions[g.leader]
    return ("code", f"{text:<52}  // fused into {s}, counted at PTX line {lead.ptx_line}", FUSED, "fused")


# ----------------------------------------------------------------------------- words

def _counts(rows):
    bits, bad = [], False
    for r in rows:
        req = r["requests"]
        if r["space"] == "global":
            per = r["sectors"] / req if req else 0
            bad |= _global_excess(r)
            bits.append(f"{req} requests, {r['sectors']} sectors ({per:.1f}/req)")
        else:
            per = r["wavefronts"] / req if req else 0
            bad |= r["conflicts"] > 0
            into = "into shared: " if r["op"] == "ldgsts" else ""      # a cp.async's second row
            bits.append(f"{into}{req} requests, {r['wavefronts']} wavefronts ({per:.1f}/req)"
                        + (f", {r['conflicts']} conflicts" if r["conflicts"] else ""))
    return "; ".join(bits) or "not executed in this launch", bad


def _global_excess(r):
    """More sectors per request than a fully used access of this width needs (edges allowed)."""
    return r["space"] == "global" and r["requests"] and r["sectors"] / r["requests"] > 1.25 * max(1, r["width"])


def _op_names(members):
    names = sorted({f"{m.opcode}.{'.'.join(x for x in m.mods if x not in ('v2', 'v4'))}" for m in members})
    return "/".join(names)


def _offsets(members):
    ops = [m.operands[1] if m.opcode != "st" else m.operands[0] for m in members]
    bases = {o.name for o in ops}
    offs = sorted(int(o.value or 0) for o in ops)
    if len(bases) == 1 and offs[0] == offs[-1]:
        return f"[{next(iter(bases))}{_signed(offs[0]) if offs[0] else ''}]"
    if len(bases) == 1:
        return f"[{next(iter(bases))}{_signed(offs[0])} .. {_signed(offs[-1])}]"
    return ", ".join(f"[{o.name}{_signed(int(o.value or 0))}]" for o in ops)


def _signed(v):
    return f"+{v}" if v >= 0 else str(v)


def _html_row(kind, text, colour, mark):
    esc = html.escape(text)
    if kind == "source":
        if "  // " in text and colour:
            code, note = text.split("  // ", 1)
            return (f"<span style='color:#999'>{html.escape(code[:4])}</span>{html.escape(code[4:])}  "
                    f"<span style='color:{colour};font-weight:bold'>// {html.escape(note)}</span>")
        return f"<span style='color:#999'>{esc[:4]}</span><b>{esc[4:]}</b>" if colour != DIM else \
            f"<span style='color:{DIM}'>{esc}</span>"
    if kind == "note":
        return f"<span style='color:{colour}'>{esc}</span>"
    if colour == DIM:
        return f"<span style='color:{DIM}'>{esc}</span>"
    code, _, note = text.partition("  // ")
    style = f"color:{colour}" + (";background:#f3eef7" if mark == "fused" else "")
    return f"<span style='{style}'>{html.escape(code)}  <b>// {html.escape(note)}</b></span>"
