"""What a simulated launch reports: metrics named as Nsight Compute names them, per source line,
atomics apart (``atomics``), which blocks touched which elements when asked (``owners``), races, other findings, printf output, and the traced block's addresses for the pictures.

Metrics are per machine instruction: where ptxas fused PTX accesses (``fusion``), the row of the
access the SASS instruction carries has the group's counts and width, and the run's warnings say
where the machine code could not be read (the counts there follow the PTX). ``listing(view=)``
shows the source alone, with its PTX, or with its SASS (``code_view``)."""
from __future__ import annotations

from ...compile.platforms import install_hint
from ..checks.finding import Finding
from . import async_result
from .code_view import render
from .metrics import LDGSTS_NAMES, METRIC_NAMES, access_width, totals
from ..checks.races import Race  # noqa: F401  (the type of SimRun.races)

MACHINE_CODE_WHEELS = ("nvidia-cuda-nvrtc==13.0.*", "nvidia-cuda-nvdisasm")   # what reads ptxas's machine code


class SimRun:
    """The result of ``Function.simulate``. Output arrays were written in place."""

    def __init__(self, program, elapsed):
        p = program
        self.grid, self.block = p.grid, p.block
        self.elapsed = elapsed
        self.output = "".join(p.output)
        self.accesses = p.accesses
        self.source_lines = p.source_lines
        self.filename = p.filename
        c = p.counters
        self.kernel = p.kernel
        self.machine = getattr(p, "fusion", None)      # fusion.Plan: the SASS and its groups
        fused = self.machine.widths if self.machine is not None else {}
        self.instructions = []
        for ins in p.kernel.instructions:
            if ins.opcode not in ("ld", "st", "ldu"):   # atomics are counted apart by ncu (op_atom)
                continue
            i = ins.index
            op = "ld" if ins.opcode in ("ld", "ldu") else "st"
            common = dict(pc=i, line=ins.line, text=ins.text, op=op, width=fused.get(i) or access_width(ins))
            # one row per space the instruction reached (a generic access may reach both)
            if c.global_requests[i]:
                self.instructions.append(dict(common, space="global", requests=int(c.global_requests[i]),
                                              sectors=int(c.sectors[i]), wavefronts=0, conflicts=0,
                                              bytes=int(c.global_bytes[i])))
            if c.shared_requests[i]:
                self.instructions.append(dict(common, space="shared", requests=int(c.shared_requests[i]),
                                              sectors=0, wavefronts=int(c.wavefronts[i]),
                                              conflicts=int(c.conflicts[i]), bytes=int(c.shared_bytes[i])))
        # cp.async (a global load), ldmatrix / stmatrix (shared): rows of the same shape, as ncu counts them
        self.instructions += async_result.rows(p)
        self.instructions.sort(key=lambda r: r["pc"])      # program order (stable: a pc's spaces keep theirs)
        self.atomics = _atomic_rows(p, c)
        self.owners = p.owners.result() if p.owners is not None else None   # see sim.checks.owners
        # PTX instructions executed, counted once per warp with an active thread (not ncu's SASS count)
        self.warp_instructions = int(c.warp_instructions.sum())
        self.tma_counts = async_result.extra_metrics(p)     # the TMA's own counters, by their ncu names
        self.metrics = {**totals(self.instructions), **self.tma_counts}
        self.by_line = {}
        for line in sorted({r["line"] for r in self.instructions}):
            self.by_line[line] = totals([r for r in self.instructions if r["line"] == line])
        self.races = sorted((f for k, f in p.findings.items() if k[0] == "race"),
                            key=lambda r: (r.scope != "block", r.lines))
        self.warnings = ([f for k, f in p.findings.items() if k[0] != "race"] + self._machine_warnings()
                         + async_result.notes(p))

    # ------------------------------------------------------------------ convenience
    def ratio(self, space="global", op="ld"):
        """Sectors per request (global) or wavefronts per request (shared)."""
        rows = [r for r in self.instructions if r["space"] == space and r["op"] == op]
        req = sum(r["requests"] for r in rows)
        num = sum(r["sectors" if space == "global" else "wavefronts"] for r in rows)
        return num / req if req else 0.0

    @property
    def error_races(self):
        return [r for r in self.races if r.scope == "block"]

    def _machine_warnings(self) -> list:
        """Where the counts follow the PTX rather than the machine code, and why."""
        plan, counted = self.machine, {r["pc"] for r in self.instructions}
        if plan is None or not counted:
            return []
        if plan.note:
            return [Finding("machine code", 0, f"memory metrics follow the PTX, not the machine code: {plan.note}",
                            1, None, None, "ptxas may fuse neighbouring narrow accesses into one wider one, which "
                            "Nsight Compute counts once; " + install_hint(MACHINE_CODE_WHEELS))]
        return [Finding("machine code", pr.line, f"the counts follow the PTX here: {pr.message}", 1, None, None)
                for pr in plan.problems if pr.pc in counted or pr.pc < 0]

    def listing(self, lines=None, view: str = "source", memory_only: bool = False):
        """The kernel's source with each memory line annotated with what it cost.

        ``view="sass"`` puts under each source line the machine instructions compiled from it
        (Nsight Compute's source view, without a GPU) and ``view="ptx"`` its PTX; loads and
        stores are marked with their width and counts, and fused ones with the PTX accesses
        they stand for. ``memory_only=True`` leaves out the other instructions. The result is
        text (print it) that a notebook shows as coloured HTML."""
        return render(self, view, lines=lines, memory_only=memory_only)

    def summary(self) -> str:
        m = self.metrics
        g = lambda s, o, k: m[METRIC_NAMES[(s, o, k)]]
        parts = []
        for op, word in (("ld", "loads"), ("st", "stores")):
            req = g("global", op, "requests")
            if req:
                parts.append(f"global {word}: {req} requests, {g('global', op, 'sectors')} sectors "
                             f"({g('global', op, 'sectors') / req:.1f} per request)")
        for op, word in (("ld", "loads"), ("st", "stores")):
            wf = g("shared", op, "wavefronts")
            if wf:
                parts.append(f"shared {word}: {wf} wavefronts, {g('shared', op, 'conflicts')} bank conflicts")
        if m.get(LDGSTS_NAMES["wavefronts"]):
            parts.append(f"cp.async writes into shared memory: {m[LDGSTS_NAMES['wavefronts']]} wavefronts, "
                         f"{m[LDGSTS_NAMES['conflicts']]} bank conflicts")
        if self.races:
            parts.append(f"{len(self.races)} race(s): " + "; ".join(str(r) for r in self.races[:3]))
        for w in self.warnings[:3]:
            parts.append(str(w))
        return "\n".join(parts) or "no global or shared memory traffic"

    def __repr__(self):
        return (f"<SimRun grid={self.grid} block={self.block} in {self.elapsed:.2f} s>\n" + self.summary())


def _atomic_rows(p, c) -> list:
    """Rows like ``instructions``' for each atomic that ran (op "atom": it returns the old value, or
    "red"): ncu counts them apart (op_atom, op_red), so they are in no total; each is a read and a
    write of memory, which is how a checker judges them."""
    rows = []
    for ins in p.kernel.instructions:
        if ins.opcode not in ("atom", "red"):
            continue
        i = ins.index
        common = dict(pc=i, line=ins.line, text=ins.text, op=ins.opcode, width=access_width(ins))
        if c.global_requests[i]:
            rows.append(dict(common, space="global", requests=int(c.global_requests[i]), sectors=int(c.sectors[i]),
                             wavefronts=0, conflicts=0, bytes=int(c.global_bytes[i])))
        if c.shared_requests[i]:
            rows.append(dict(common, space="shared", requests=int(c.shared_requests[i]), sectors=0,
                             wavefronts=int(c.wavefronts[i]), conflicts=int(c.conflicts[i]),
                             bytes=int(c.shared_bytes[i])))
    return rows
