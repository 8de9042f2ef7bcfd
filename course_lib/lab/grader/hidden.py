"""The hidden shapes a submission is graded on, and the course's secret seed they are drawn from.

    hidden.seed(course)                                          # course/.course_lib_seed (written once by export)
    hidden.hidden_shapes(EXERCISES["tile_32x8"], seed, "alice", "06_more_work_per_thread")

Shapes are drawn at grading time from the seed, the student and the assignment, so they differ per term and
per student and are never written in a release. This module draws; it runs nothing.
"""
from __future__ import annotations

import hashlib
import math
import random
import secrets
from pathlib import Path

SEED_FILE = ".course_lib_seed"        # in the course folder, beside nbgrader_config.py

def _walk(values, tile, rng, g=None) -> list | None:
    """Sizes of one dimension whose residues modulo `tile` are every residue the exercise allows (sizes
    stay multiples of `g`, default gcd(values)), shuffled; None when the exercise keeps this dimension fixed."""
    if len(set(values)) == 1:
        return None
    g = g or math.gcd(*values)
    lcm = g * tile // math.gcd(g, tile)
    out = []
    for r in range(0, tile, math.gcd(g, tile)):
        v = next(v for v in range(r, r + lcm + 1, tile) if v % g == 0 and v > 0)
        out.append(v + lcm * rng.randrange(2))       # one more tile's worth at random: not always the smallest
    rng.shuffle(out)
    return out


def _period(values, tile, g=None) -> int:
    """The step that keeps a size's residue modulo `tile` and its multiple of gcd(values): lcm of both."""
    g = g or math.gcd(*values)
    return g * tile // math.gcd(g, tile)


def hidden_shapes(ex, seed: str, student: str, assignment: str = "") -> list[tuple]:
    """The shapes exercise `ex` is graded on beyond its own, for one student of one term (`seed`).
    Constraints come from the exercise's folder: each dimension a multiple of ``hidden.multiple_of`` (default:
    its gcd over ex.shapes: 4 for float4, 2 for 16-bit pairs), a dimension equal in every shape stays so
    (cols 40 for aos_struct), 3-tuples keep a batch, ``hidden.square`` keeps rows = cols (an in-place
    transpose); rows and cols each walk every residue modulo ``hidden.residues`` (default: ex.tile)."""
    rng = random.Random(hashlib.sha256(f"{seed}|{assignment}|{student}|{ex.key}".encode()).digest())
    rows, cols = [s[-2] for s in ex.shapes], [s[-1] for s in ex.shapes]
    mod_r, mod_c = getattr(ex, "residues", None) or (ex.tile[1], ex.tile[0])
    g_r, g_c = getattr(ex, "multiple_of", None) or (None, None)
    r, c = _walk(rows, mod_r, rng, g_r), _walk(cols, mod_c, rng, g_c)
    if getattr(ex, "square", False):
        c = list(r) if r is not None else None
    n = max(len(r or ()), len(c or ()), 1)
    walked_rows = r is not None
    r = [rows[0]] * n if r is None else (r * n)[:n]
    c = [cols[0]] * n if c is None else (c * n)[:n]
    # a shape the release shows is no hidden test: one more tile's worth (the same residue) instead
    shown = {tuple(s[-2:]) for s in ex.shapes}
    for i in range(n):
        while (r[i], c[i]) in shown:
            if walked_rows:
                r[i] += _period(rows, mod_r, g_r)
                c[i] = r[i] if getattr(ex, "square", False) else c[i]
            else:
                c[i] += _period(cols, mod_c, g_c)
    if len(ex.shapes[0]) == 3:
        return [(2 + rng.randrange(2), *s) for s in zip(r, c)]
    return list(zip(r, c))


def seed(course, create: bool = False) -> str:
    """The course's secret seed (course/.course_lib_seed): written once by export, read by the grader."""
    path = Path(course) / SEED_FILE
    if not path.exists() and create:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(secrets.token_hex(16) + "\n")
        path.chmod(0o600)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no seed for the hidden shapes; `python -m course_lib instructor nbgrader "
                                f"--out {Path(course)}` writes one (keep it: it makes this term's hidden shapes)")
    return path.read_text().strip()


