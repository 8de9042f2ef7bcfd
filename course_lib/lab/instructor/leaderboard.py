"""A leaderboard on exact counts: what each passing kernel makes the hardware do, fewest first.

    boards = leaderboard.boards(book, names="pseudonyms")      # one per exercise (and variant) that ranks
    boards[0].rows[0].name, boards[0].rows[0].spend             # the leader and its counts
    leaderboard.opted_in("beat_library")                       # exercise.toml: leaderboard = true

Exercises where speed is the point rank their submissions: beat_library (the capstone's) and any
exercise whose ``exercise.toml`` says ``leaderboard = true``. A submission ranks when its final verdict
passed (every shape, shown and hidden, every property). Its counts are what the simulator counted on the
exercise's own shapes, the same shapes for every student of a variant (the hidden ones differ per
student, so they decide nothing here): global sectors, shared wavefronts (cp.async's writes into shared
memory and the TMA's included) and every PTX instruction a warp executes, summed
(course_lib.sim.results.spend: everything a kernel spends, so that no kernel climbs by hiding work where
a count does not look). Exact, and the same on every machine and every run.

**The rule**: fewer sectors first; equal sectors, fewer wavefronts; equal both, fewer instructions
(spend.rank_key); equal in all three, the earlier submission (nbgrader's timestamp; one without a
timestamp after those with one); then the student id's order. Variants of an exercise rank apart: their
counts are not comparable. Names are the instructor's choice: pseudonyms (the default: stable for a
term, drawn from the course's secret, so a board can be shown to the class), nbgrader's student ids,
or the names in nbgrader's gradebook. GPU times never rank: see ``gpu_times``.
"""
from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass, field

from ...sim.results.spend import COUNTS, Spend, rank_key
from ...teach import spec
from ...teach.exercise_list import folder
from ..grader import hidden

ALWAYS = ("beat_library",)                  # the capstone's exercise: speed is its point
NAMES = ("pseudonyms", "ids", "names")
RULE = ("fewer sectors first; then fewer wavefronts; then fewer instructions; then the earlier submission "
        "(nbgrader's timestamp); then the student id's order")
_ADJECTIVES = ("amber", "brisk", "calm", "dapper", "eager", "fuzzy", "gentle", "hazel", "indigo", "jolly",
               "keen", "lively", "mellow", "nimble", "olive", "plucky", "quiet", "rosy", "sunny", "tidy",
               "upbeat", "vivid", "witty", "young", "zesty", "bold", "cosy", "daring", "frank", "glad", "hardy",
               "merry")
_ANIMALS = ("otter", "heron", "lynx", "panda", "koala", "gecko", "bison", "crane", "finch", "ibex", "lemur",
            "marten", "newt", "ocelot", "puffin", "quail", "raven", "seal", "tapir", "urchin", "vole", "walrus",
            "yak", "zebra", "badger", "camel", "dingo", "egret", "ferret", "gibbon", "hare", "jackal")


@dataclass(frozen=True)
class Row:
    rank: int
    name: str
    student: str
    spend: Spend
    elements: int                  # elements of the tiles the counts were taken over (the exercise's shapes)
    submitted: str | None
    tied: bool = False             # equal counts to the row above: the timestamp decided
    gpu: str = ""                  # a GPU time that passed the sanity checks, or why it is not shown

    def per(self, unit: int = 1024) -> dict:
        return self.spend.per(self.elements, unit) if self.elements else {}


@dataclass
class Board:
    assignment: str
    exercise: str
    variant: str
    rows: list = field(default_factory=list)
    unranked: int = 0              # final submissions that did not pass (not on the board)
    rule: str = RULE


def opted_in(key: str) -> bool:
    """Whether exercise `key` ranks its submissions (beat_library, or leaderboard = true in its exercise.toml)."""
    if key in ALWAYS:
        return True
    try:
        return spec.read(folder(key)).get("leaderboard") is True
    except (OSError, ValueError, KeyError):
        return False


def pseudonym(secret: str, student: str) -> str:
    """A stable, friendly name for `student` this term (from the course's secret seed): 'amber otter'."""
    d = hmac.new(hashlib.sha256(b"course_lib pseudonym\0" + secret.encode()).digest(), student.encode(),
                 hashlib.sha256).digest()
    return f"{_ADJECTIVES[d[0] % len(_ADJECTIVES)]} {_ANIMALS[d[1] % len(_ANIMALS)]}"


def namer(book, names: str = "pseudonyms"):
    """student id -> the name the board shows (NAMES); pseudonyms that collide get the id's digest's digits."""
    if names not in NAMES:
        raise ValueError(f"--names {names!r}: one of {', '.join(NAMES)}")
    students = sorted({e.student for e in book.final})
    if names == "ids":
        return lambda s: s
    if names == "names":
        from .classbook import gradebook_names
        known = gradebook_names(book.course)
        return lambda s: known.get(s) or s
    secret = hidden.seed(book.course)
    chosen, taken = {}, {}
    for s in students:
        base = pseudonym(secret, s)
        name = base if base not in taken else f"{base} {hashlib.sha256((secret + s).encode()).hexdigest()[:4]}"
        taken[name] = s
        chosen[s] = name
    return lambda s: chosen.get(s) or pseudonym(secret, s)


def _spend(record: dict) -> Spend | None:
    c = record.get("counts") or {}
    if not all(isinstance(c.get(k), int) for k in COUNTS):
        return None
    return Spend(*(int(c[k]) for k in COUNTS))


def order_key(entry, spent: Spend) -> tuple:
    """The rule (module docstring) as a sort key."""
    return (*rank_key(spent), entry.submitted is None, str(entry.submitted or ""), entry.student)


def boards(book, names: str = "pseudonyms", gpu_times=None) -> list[Board]:
    """One Board per (assignment, exercise that ranks, variant) of the book, rows in the rule's order."""
    name = namer(book, names)
    out = []
    for assignment in book.assignments():
        for key in [k for k in book.exercises(assignment) if opted_in(k)]:
            final = [e for e in book.final if e.assignment == assignment and e.exercise == key]
            for variant in sorted({e.record.get("variant") or "" for e in final}):
                mine = [e for e in final if (e.record.get("variant") or "") == variant]
                ranked = sorted(((e, s) for e in mine if e.ok and (s := _spend(e.record)) is not None),
                                key=lambda es: order_key(*es))
                board = Board(assignment, key, variant, unranked=len(mine) - len(ranked))
                for i, (e, s) in enumerate(ranked):
                    tied = i > 0 and rank_key(s) == rank_key(ranked[i - 1][1])
                    time = (gpu_times or {}).get((assignment, e.student, key), "")
                    counts = e.record["counts"]          # per 1024 elements of whole tiles, as the budget is
                    elements = int(counts.get("tile elements") or counts.get("elements") or 0)
                    board.rows.append(Row(i + 1, name(e.student), e.student, s, elements, e.submitted, tied, time))
                out.append(board)
    return out
