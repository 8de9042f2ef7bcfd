"""The hidden shapes a submission is graded on, and the course's secret seed they are drawn from.

    hidden.seed(course)                                          # course/.course_lib_seed (written once by export)
    shapes = hidden.hidden_shapes(EXERCISES["tile_32x8"], seed, "alice", "06_more_work_per_thread")
    run, wide = hidden.split(shapes)                             # wide: over 2^32 elements, sampled, not run whole

Shapes are drawn at grading time from the seed, the student and the assignment, so they differ per term and
per student and are never written in a release. What every draw guarantees, for tiles of TX x TY (columns x
rows of in one block covers; residues are of rows modulo TY and of cols modulo TX):

- every residue of each dimension that the exercise's constraints allow, each in a shape of its own (the
  residue walk: max(TX, TY) shapes of at most a few tiles);
- off the tile in both dimensions at once: every shape of the walk but two, in which one dimension's residue
  is 0 and the other's is not (one of each orientation); and one shape on the tile in both;
- large: a shape with cols and one with rows of 3000 to 6000 (both off the tile, the other dimension too),
  and the thin ones, 1 x N and N x 1 (N of 3000 to 6000, off the tile; the smallest size a constraint allows
  instead of 1);
- the exercise's constraints (:func:`rules`, the one place they are read): each dimension a multiple of what
  the exercise asks (the gcd over its shapes: 4 for float4, 2 for 16-bit pairs), a dimension equal in every
  shape stays fixed (aos_struct's cols), a batch (2 or 3) where shapes are (batch, rows, cols), rows = cols
  where the exercise says ``square``, no size much beyond ``largest`` where it gives one (an in-place
  transpose's launch stays within the checker's work limit); where it tests 64-bit offsets (``wide``), a wide shape of its own for the
  student, off the tile, over 2^32 elements, whose launch is sampled a few blocks at a time (:func:`split`);
- none of the shapes the release shows.

What no draw guarantees: every (rows residue, cols residue) pair. The walk pairs the residues by a random
matching per student (TX of TX * TY pairs for a square tile): a kernel wrong on a set S of pairs escapes one
student's draw with a probability near (1 - |S| / (TX * TY)) ** TX — a bug on a whole quarter of the pairs
(both residues past half the tile) almost never escapes, a kernel keyed on one exact pair escapes 31 draws in
32. The time this costs per submission is measured in docs/INSTRUCTORS.md §6. This module draws; it runs nothing.
"""
from __future__ import annotations

import hashlib
import math
import random
import secrets
from dataclasses import dataclass
from pathlib import Path

from ...teach.variants import SECRET_FILE as SEED_FILE     # the class's one secret: hidden shapes and variants

LARGE = (3000, 6000)                  # a large dimension is drawn from this range
WALK = 32                             # residues walked per dimension, at most: a warp's 32
WIDE = 2 ** 32                        # more elements than this: a wide launch, sampled, never run whole


@dataclass(frozen=True)
class Dim:
    """What one dimension of a hidden shape may be: `fixed`, else a multiple of `step`; residues modulo `tile`."""
    tile: int
    step: int = 1
    fixed: int | None = None

    @property
    def period(self) -> int:
        """Adding it keeps a size's residue and its multiple: lcm(step, tile)."""
        return self.step * self.tile // math.gcd(self.step, self.tile)

    def residues(self) -> list[int]:
        return list(range(0, self.tile, math.gcd(self.step, self.tile)))

    def walked(self, rng) -> list[int]:
        """The residues the walk visits: all of them up to WALK; beyond (a tile of 128 or 256), one of each
        residue modulo WALK (a warp's 32), spread so that every WALK-wide part of the tile has some."""
        every = self.residues()
        if len(every) <= WALK:
            return every
        classes = sorted({r % WALK for r in every})
        parts = list(range(-(-self.tile // WALK)))
        wanted = (parts * -(-len(classes) // len(parts)))[:len(classes)]
        rng.shuffle(wanted)
        out = []
        for c, part in zip(classes, wanted):
            options = [r for r in every if r % WALK == c]
            out.append(0 if c == 0 else next((r for r in options if r // WALK == part), rng.choice(options)))
        return out

    def smallest(self, residue: int) -> int:
        """The smallest positive size with this residue that is a multiple of step."""
        return next(v for v in range(residue, residue + self.period + 1, self.tile) if v % self.step == 0 and v > 0)

    def small(self, residue: int, rng) -> int:
        """A size with this residue of at most two periods: the smallest, or one period more."""
        return self.smallest(residue) + self.period * rng.randrange(2)

    def off(self, rng) -> int:
        """A size off the tile (where the step allows), over one tile and under three."""
        return self.smallest(rng.choice([r for r in self.residues() if r] or [0])) + self.period * rng.randrange(1, 3)

    def large(self, rng, low: int = LARGE[0], high: int = LARGE[1]) -> int:
        """A size in [low, high], off the tile where the step allows."""
        v = self.smallest(rng.choice([r for r in self.residues() if r] or [0]))
        return v + self.period * ((low - v) // self.period + 1 + rng.randrange(max(1, (high - low) // self.period)))


@dataclass(frozen=True)
class Rules:
    rows: Dim
    cols: Dim
    batch: bool = False
    square: bool = False
    wide: tuple | None = None
    largest: int | None = None        # exercise.toml's hidden.largest: no size beyond it


def rules(ex) -> Rules:
    """The constraints of `ex`'s hidden shapes: exercise.toml's [hidden] (``square``, ``multiple_of``,
    ``residues``: [rows, cols] the walk takes residues modulo) where the exercise has them, else what its shapes
    and launch show (a dimension equal in all is fixed; the gcd is the step; the tile the residues)."""
    rows, cols = [s[-2] for s in ex.shapes], [s[-1] for s in ex.shapes]
    multiple = getattr(ex, "multiple_of", None) or (math.gcd(*rows), math.gcd(*cols))
    square = bool(getattr(ex, "square", False))
    fixed = lambda values: values[0] if len(set(values)) == 1 and len(values) > 1 else None     # noqa: E731
    residues = getattr(ex, "residues", None)
    tile = (residues[1], residues[0]) if residues else _tile(ex)
    return Rules(Dim(tile[1], multiple[0], None if square else fixed(rows)),
                 Dim(tile[0], multiple[1], None if square else fixed(cols)),
                 batch=len(ex.shapes[0]) == 3, square=square, wide=tuple(ex.wide) if ex.wide else None,
                 largest=getattr(ex, "largest", None))


def _tile(ex) -> tuple[int, int]:
    """(columns, rows) of in one block covers: ex.tile, or, for a custom grid of one block per tile
    (``cols / (TILE * STEPS)``), the tile that grid implies; a grid that is not one (a grid-stride loop, a
    1D grid over every element) keeps ex.tile."""
    if getattr(ex, "grid", None) is None:
        return tuple(ex.tile)
    out = []
    for axis in (0, 1):
        def blocks(n, other):
            grid = ex.launch(*((other, n) if axis == 0 else (n, other)))[0]
            return grid[axis] if len(grid) > axis else 1
        t = next((n for n in range(1, 4097) if blocks(n + 1, 64) == 2), None)
        ok = t and all(blocks(k * t, o) == k and blocks(k * t + 1, o) == k + 1 for k in (1, 2, 5) for o in (3, 64))
        out.append(t if ok else None)
    return (out[0] or ex.tile[0], out[1] or ex.tile[1])


def _walk(r: Rules, rng) -> list[tuple[int, int]]:
    """Every residue of each free dimension, paired by a random matching; a residue 0 of one dimension
    paired with a nonzero one of the other, so that the rest are off the tile in both."""
    if r.square:
        both = Dim(r.rows.tile * r.cols.tile // math.gcd(r.rows.tile, r.cols.tile), math.lcm(r.rows.step, r.cols.step))
        return [(v, v) for v in (both.small(res, rng) for res in both.walked(rng))]
    rows = [r.rows.small(res, rng) for res in r.rows.walked(rng)] if r.rows.fixed is None else [r.rows.fixed]
    cols = [r.cols.small(res, rng) for res in r.cols.walked(rng)] if r.cols.fixed is None else [r.cols.fixed]
    rng.shuffle(rows)
    rng.shuffle(cols)
    n = max(len(rows), len(cols))
    rows, cols = (rows * n)[:n], (cols * n)[:n]
    if r.rows.fixed is None and r.cols.fixed is None:     # no walk shape on the tile in both: each 0 meets a non-0
        for i in range(n):
            if rows[i] % r.rows.tile == 0 and cols[i] % r.cols.tile == 0:
                j = next((j for j in range(n) if rows[j] % r.rows.tile and cols[j] % r.cols.tile), None)
                if j is not None:
                    cols[i], cols[j] = cols[j], cols[i]
    return list(zip(rows, cols))


def _extra(r: Rules, rng) -> list[tuple[int, int]]:
    """On the tile in both; large in each dimension; 1 x N and N x 1 (each kept to the constraints)."""
    def dim(d: Dim, kind: str) -> int:
        if d.fixed is not None:
            return d.fixed
        if kind == "on":
            return d.period * rng.randrange(2, 4)
        if kind == "off":
            return d.off(rng)
        if kind == "thin":
            return d.step
        return d.large(rng, *_bounds(r, *LARGE))
    if r.square:
        d = Dim(math.lcm(r.rows.tile, r.cols.tile), math.lcm(r.rows.step, r.cols.step))
        return [(n, n) for n in (d.period * rng.randrange(2, 4), d.large(rng, *_bounds(r, 2049, 2200)))]  # n^2 ~ 2048^2
    pairs = [("on", "on"), ("off", "large"), ("large", "off"), ("thin", "large"), ("large", "thin")]
    return list(dict.fromkeys((dim(r.rows, a), dim(r.cols, b)) for a, b in pairs))


def _bounds(r: Rules, low: int, high: int) -> tuple[int, int]:
    """[low, high] of a large size, below exercise.toml's hidden.largest where it gives one (a tenth below it)."""
    if r.largest is None or r.largest >= high:
        return low, high
    return max(1, r.largest - r.largest // 10), r.largest


def hidden_shapes(ex, seed: str, student: str, assignment: str = "") -> list[tuple]:
    """The shapes exercise `ex` is graded on beyond its own, for one student of one term (`seed`): see the
    module's docstring for what they guarantee. (rows, cols), or (batch, rows, cols) where ex's shapes are."""
    rng = random.Random(hashlib.sha256(f"{seed}|{assignment}|{student}|{ex.key}".encode()).digest())
    r = rules(ex)
    shown = {tuple(s[-2:]) for s in ex.shapes}
    out = []
    for shape in _walk(r, rng) + _extra(r, rng):
        for _ in range(8):                          # a shape shown or drawn already: one more period, same residues
            if shape not in shown and shape not in out:
                out.append(shape)
                break
            shape = _further(r, shape)
    shapes = [(2 + rng.randrange(2), *s) if r.batch else s for s in out]
    return shapes + ([_wide(r, rng)] if r.wide else [])


def _further(r: Rules, shape: tuple) -> tuple:
    rows, cols = shape
    if r.square:
        step = math.lcm(r.rows.period, r.cols.period)
        return rows + step, cols + step
    return (rows, cols + r.cols.period) if r.cols.fixed is None else (rows + r.rows.period if r.rows.fixed is None
                                                                      else rows, cols)


def _wide(r: Rules, rng) -> tuple:
    """The exercise's wide shape made the student's: each free dimension a little larger, off the tile."""
    *batch, rows, cols = r.wide
    grown = [Dim(d.tile, d.step).large(rng, v, v + max(v // 16, d.period * 4)) for d, v in ((r.rows, rows),
                                                                                           (r.cols, cols))]
    return (*batch, *grown)


def split(shapes) -> tuple[list[tuple], tuple | None]:
    """(the shapes a check runs whole, the wide shape whose launch it samples, or None)."""
    wide = [tuple(s) for s in shapes if math.prod(s) > WIDE]
    return [tuple(s) for s in shapes if math.prod(s) <= WIDE], (wide[0] if wide else None)


def seed(course, create: bool = False) -> str:
    """The course's secret seed (course/.course_lib_seed): written once by export, read by the grader; it draws
    the hidden shapes and, through each student's variant key (teach.variants.student_key), the variants."""
    path = Path(course) / SEED_FILE
    if not path.exists() and create:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(secrets.token_hex(16) + "\n")
        path.chmod(0o600)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no seed for the hidden shapes; `python -m course_lib instructor nbgrader "
                                f"--out {Path(course)}` writes one (keep it: it makes this term's hidden shapes)")
    return path.read_text().strip()
