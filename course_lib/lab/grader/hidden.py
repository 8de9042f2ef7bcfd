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

from ...teach.variants import SECRET_FILE as SEED_FILE     # the class's one secret: hidden shapes and variants

def _walk(values, tile, rng) -> list | None:
    """Sizes of one dimension whose residues modulo `tile` are every residue the exercise allows (sizes
    stay multiples of gcd(values)), shuffled; None when the exercise keeps this dimension fixed."""
    if len(set(values)) == 1:
        return None
    g = math.gcd(*values)
    lcm = g * tile // math.gcd(g, tile)
    out = []
    for r in range(0, tile, math.gcd(g, tile)):
        v = next(v for v in range(r, r + lcm + 1, tile) if v % g == 0 and v > 0)
        out.append(v + lcm * rng.randrange(2))       # one more tile's worth at random: not always the smallest
    rng.shuffle(out)
    return out


def _period(values, tile) -> int:
    """The step that keeps a size's residue modulo `tile` and its multiple of gcd(values): lcm of both."""
    g = math.gcd(*values)
    return g * tile // math.gcd(g, tile)


def hidden_shapes(ex, seed: str, student: str, assignment: str = "") -> list[tuple]:
    """The shapes exercise `ex` is graded on beyond its own, for one student of one term (`seed`).
    Constraints come from the exercise's shapes: each dimension a multiple of its gcd over ex.shapes
    (4 for float4, 2 for 16-bit pairs), a dimension equal in every shape stays so (cols 40 for
    aos_struct), 3-tuples keep a batch; rows and cols each walk every residue modulo ex.tile."""
    rng = random.Random(hashlib.sha256(f"{seed}|{assignment}|{student}|{ex.key}".encode()).digest())
    rows, cols = [s[-2] for s in ex.shapes], [s[-1] for s in ex.shapes]
    r, c = _walk(rows, ex.tile[1], rng), _walk(cols, ex.tile[0], rng)
    n = max(len(r or ()), len(c or ()), 1)
    walked_rows = r is not None
    r = [rows[0]] * n if r is None else (r * n)[:n]
    c = [cols[0]] * n if c is None else (c * n)[:n]
    # a shape the release shows is no hidden test: one more tile's worth (the same residue) instead
    shown = {tuple(s[-2:]) for s in ex.shapes}
    for i in range(n):
        while (r[i], c[i]) in shown:
            if walked_rows:
                r[i] += _period(rows, ex.tile[1])
            else:
                c[i] += _period(cols, ex.tile[0])
    if len(ex.shapes[0]) == 3:
        return [(2 + rng.randrange(2), *s) for s in zip(r, c)]
    return list(zip(r, c))


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


