"""Predict, then run: the student writes down what a kernel will cost before the simulator says.

    cl.predict(sim.run("rect", PAD=0), wavefronts_ld=None)   # stored in the notebook: asks, tells nothing
    cl.predict(sim.run("rect", PAD=0), wavefronts_ld=16)     # after the student's guess: how close, and why

Guesses are keyword arguments, one per quantity, each per request (what Nsight Compute divides
by, and what the notebooks draw):

    sectors_ld, sectors_st         global 32-byte sectors per request (loads, stores)
    wavefronts_ld, wavefronts_st   shared-memory wavefronts per request
    conflicts_ld, conflicts_st     shared-memory bank conflicts per request (extra wavefronts)
    wavefronts_ldgsts, conflicts_ldgsts   the same for cp.async's writes into shared memory (ncu's op_ldgsts)

The run is a SimRun or a backend ``Result`` (``sim.run(...)``); ``line=N`` narrows every quantity to
the memory instructions of source line N. While any guess is None, nothing is revealed: the answer
says what to fill in. With every guess given it shows the simulator's value next to each guess —
right (within 5 %), close (within a factor 1.5) or off, by how much and in which direction — and,
for an answer that is off, which line costs what. It neither runs kernels nor keeps score between
cells.
"""
from __future__ import annotations

import difflib

from dataclasses import dataclass

from ..errors import ArgumentError

QUANTITIES = {   # keyword -> (space, op, numerator, words)
    "sectors_ld": ("global", "ld", "sectors", "global loads: sectors per request"),
    "sectors_st": ("global", "st", "sectors", "global stores: sectors per request"),
    "wavefronts_ld": ("shared", "ld", "wavefronts", "shared loads: wavefronts per request"),
    "wavefronts_st": ("shared", "st", "wavefronts", "shared stores: wavefronts per request"),
    "conflicts_ld": ("shared", "ld", "conflicts", "shared loads: bank conflicts per request"),
    "conflicts_st": ("shared", "st", "conflicts", "shared stores: bank conflicts per request"),
    "wavefronts_ldgsts": ("shared", "ldgsts", "wavefronts", "cp.async writes into shared memory: wavefronts per request"),
    "conflicts_ldgsts": ("shared", "ldgsts", "conflicts", "cp.async writes into shared memory: bank conflicts per request"),
}
WHY = {
    "sectors": "a warp's request costs one sector per distinct 32-byte piece its 32 addresses touch",
    "wavefronts": "a shared request takes as many wavefronts as its busiest bank has distinct words "
                  "(16-byte accesses: per quarter-warp phase, so 4 at least; 8-byte: per half-warp)",
    "conflicts": "bank conflicts are the wavefronts beyond the least the access width needs",
}


@dataclass
class Guess:
    words: str
    guess: float | None
    actual: float
    lines: list          # [(line, value, source text)] of the instructions behind `actual`

    @property
    def verdict(self) -> str:
        g, a = self.guess, self.actual
        if abs(g - a) <= 0.05 * max(abs(a), 1e-9) + 1e-9:
            return "right"
        if a > 0 and g > 0 and max(g / a, a / g) <= 1.5:
            return "close"
        return "off"


@dataclass
class Prediction:
    title: str
    guesses: list

    @property
    def complete(self) -> bool:
        return all(g.guess is not None for g in self.guesses)

    @property
    def right(self) -> int:
        return sum(g.verdict == "right" for g in self.guesses) if self.complete else 0

    def __repr__(self):
        lines = [f"Predict, then run: {self.title}"]
        if not self.complete:
            width = max(len(g.words) for g in self.guesses)
            lines += [f"  {g.words:{width}s}  your guess: {'?' if g.guess is None else _num(g.guess)}"
                      for g in self.guesses]
            lines.append("  Replace each None with your guess (a number) and run the cell again: the simulator's "
                         "answers appear only then.")
            return "\n".join(lines)
        width = max(len(g.words) for g in self.guesses)
        for g in self.guesses:
            mark = {"right": "✓", "close": "≈", "off": "✗"}[g.verdict]
            line = f"  {mark} {g.words:{width}s}  you: {_num(g.guess):>6s}   simulator: {_num(g.actual):>6s}"
            if g.verdict != "right":
                line += f"  ({_how_far(g.guess, g.actual)})"
            lines.append(line)
            if g.verdict != "right":
                kind = next(v[2] for k, v in QUANTITIES.items() if v[3] == g.words)
                lines.append(f"      why: {WHY[kind]}")
                lines += [f"      line {n}: {_num(v)}  {text}" for n, v, text in g.lines[:3]]
        lines.append(f"  {self.right} of {len(self.guesses)} right" + (" — well predicted!" if
                                                                      self.right == len(self.guesses) else ""))
        return "\n".join(lines)


def _num(x: float) -> str:
    return f"{x:.0f}" if abs(x - round(x)) < 1e-9 else f"{x:.2f}"


def _how_far(guess, actual) -> str:
    if actual == 0 or guess == 0:
        return f"{'more' if actual > guess else 'fewer'} than you thought"
    f = actual / guess
    return f"{f:.1f}x more than you thought" if f > 1 else f"{1 / f:.1f}x fewer than you thought"


def _rows(run, space, op, line):
    return [r for r in run.instructions if r["space"] == space and r["op"] == op and r["requests"]
            and (line is None or r["line"] == line)]


def _value(rows, what):
    req = sum(r["requests"] for r in rows)
    return sum(r[what] for r in rows) / req if req else 0.0


def predict(run, *, line: int | None = None, **guesses) -> Prediction:
    """Compare guesses (see the module docstring) with a simulated run; None = not guessed yet.

        cl.predict(sim.run("naive_row"), sectors_ld=4, sectors_st=32)
    """
    if not guesses:
        raise ArgumentError("say what you predict", hint="e.g. predict(run, sectors_st=None): one of "
                            + ", ".join(QUANTITIES))
    unknown = [k for k in guesses if k not in QUANTITIES]
    if unknown:
        close = difflib.get_close_matches(unknown[0], list(QUANTITIES), n=1)
        raise ArgumentError(f"unknown quantity {unknown[0]!r}", hint=(f"did you mean {close[0]}? " if close else "")
                            + f"predict one of: {', '.join(QUANTITIES)}")
    sim = getattr(run, "sim", run)
    if not hasattr(sim, "instructions"):
        raise ArgumentError(f"predict needs a simulated run, not {type(run).__name__}",
                            hint="pass what sim.run(...) or kernel.simulate(...) returned")
    title = (f"{run.name} ({run.dtype}, {run.shape[0]}x{run.shape[1]})" if hasattr(run, "sim") else "this launch")
    title += f", line {line}" if line else ""
    out = []
    for key, guess in guesses.items():
        space, op, what, words = QUANTITIES[key]
        if guess is not None and (isinstance(guess, bool) or not isinstance(guess, (int, float))):
            raise ArgumentError(f"{key}={guess!r}: a guess is a number", hint=f"e.g. {key}=4, or {key}=None while "
                                "you think (the answer stays hidden until every guess is given)")
        rows = _rows(sim, space, op, line)
        by_line = {}
        for r in rows:
            by_line.setdefault(r["line"], []).append(r)
        detail = [(n, _value(rs, what), _source(sim, n)) for n, rs in sorted(by_line.items())]
        out.append(Guess(words, guess, _value(rows, what), detail))
    return Prediction(title, out)


def _source(sim, n) -> str:
    lines = getattr(sim, "source_lines", None) or []
    return lines[n - 1].strip() if 0 < n <= len(lines) else ""
