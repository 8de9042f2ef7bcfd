"""What grading stored about a class, read back: each submission's verdict records, final and first.

    book = classbook.read(Path("course"), ["06_tiles"])     # assignments: all when empty
    book.final        # [Entry]: one per student, assignment, notebook and exercise (autograded/)
    book.first        # {(assignment, student, exercise): Entry}: the earliest graded submission
    book.attempts     # {(assignment, student, exercise): number of submissions graded}

The records come from the locked test cells of ``autograded/<student>/<assignment>/*.ipynb`` (what
``nbgrader autograde`` keeps, with the course's grader's signed record in each test cell: grader.verdicts)
and from the course's own history of graded submissions (grader.verdict_store), which nbgrader does
not keep. A record not signed by this course's key for that very place (a student's forgery, another
course's, a notebook moved between students) is left out and counted in ``book.refused``; a notebook
graded before records existed counts in ``book.unrecorded``. Nothing is parsed from text and nothing is
run: this reads JSON, on any machine that holds the course folder.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from ...teach.exercise_list import EXERCISES
from ..grader import hidden, verdict_store, verdicts


@dataclass(frozen=True)
class Entry:
    """One exercise of one graded submission."""
    assignment: str
    student: str
    notebook: str
    exercise: str
    record: dict
    submitted: str | None = None
    graded: str | None = None

    @property
    def ok(self) -> bool:
        return bool(self.record.get("ok"))

    @property
    def key(self) -> tuple:
        return self.assignment, self.student, self.exercise


@dataclass
class Book:
    course: Path
    final: list = field(default_factory=list)
    first: dict = field(default_factory=dict)
    attempts: dict = field(default_factory=dict)
    notebooks: int = 0            # autograded notebooks read
    refused: int = 0              # records of our type whose signature or place did not hold
    unrecorded: int = 0           # autograded notebooks with course test cells but no record (older grading)

    def assignments(self) -> list[str]:
        return sorted({e.assignment for e in self.final})

    def exercises(self, assignment: str) -> list[str]:
        return sorted({e.exercise for e in self.final if e.assignment == assignment},
                      key=lambda k: (list(EXERCISES).index(k) if k in EXERCISES else len(EXERCISES), k))


def _entries(envelopes) -> list[Entry]:
    return [Entry(e["assignment"], e["student"], e["notebook"], e["record"]["exercise"], e["record"],
                  e.get("submitted"), e.get("graded")) for e in envelopes]


def _tests_and_ours(nb) -> tuple[int, int]:
    """(course test cells, outputs of the record's type anywhere) of a notebook dict."""
    tests = sum(1 for c in nb.get("cells", []) if verdicts.test_key(c, EXERCISES))
    ours = sum(1 for c in nb.get("cells", []) for o in c.get("outputs", []) or []
               if isinstance(o, dict) and verdicts.MIME in (o.get("data") or {}))
    return tests, ours


def read(course, assignments=()) -> Book:
    """The class's records for `assignments` (every autograded one when empty); FileNotFoundError when the
    folder is no graded course (no seed, or nothing in autograded/)."""
    course = Path(course)
    secret = hidden.seed(course)                 # FileNotFoundError: not the course folder
    graded = course / "autograded"
    if not graded.is_dir():
        raise FileNotFoundError(f"{graded}: no autograded submissions yet (nbgrader autograde ASSIGNMENT writes them)")
    wanted = set(assignments)
    book = Book(course)
    for path in sorted(graded.glob("*/*/*.ipynb")):
        student, assignment, notebook = path.parent.parent.name, path.parent.name, path.stem
        if wanted and assignment not in wanted:
            continue
        try:
            nb = json.loads(path.read_text())
        except (OSError, ValueError):
            book.unrecorded += 1
            continue
        book.notebooks += 1
        found = verdicts.read(nb, secret, student, assignment, notebook, EXERCISES)
        tests, ours = _tests_and_ours(nb)
        book.refused += ours - len(found)
        book.unrecorded += tests > 0 and not found
        book.final += _entries(found)
    _history(book, secret, wanted)
    return book


def _history(book: Book, secret: str, wanted: set) -> None:
    """First tries and attempt counts from the kept submissions; a student whose history is missing (graded
    before it was kept) has one attempt, the final one."""
    earliest, count = {}, {}
    for assignment, student, notebook, submitted, envelopes in verdict_store.attempts(book.course, secret):
        if wanted and assignment not in wanted:
            continue
        for e in _entries(envelopes):
            count[e.key] = count.get(e.key, 0) + 1
            if e.key not in earliest or str(e.submitted or "") < str(earliest[e.key].submitted or ""):
                earliest[e.key] = e
    for e in book.final:
        book.first[e.key] = earliest.get(e.key, e)
        book.attempts[e.key] = max(count.get(e.key, 1), 1)


def gradebook_names(course) -> dict:
    """{student id: "First Last"} from nbgrader's gradebook where it holds names; {} without one."""
    db = Path(course) / "gradebook.db"
    if not db.is_file():
        return {}
    try:
        from nbgrader.api import Gradebook
        with Gradebook(f"sqlite:///{db}") as gb:
            return {s.id: " ".join(filter(None, [s.first_name, s.last_name])) for s in gb.students
                    if s.first_name or s.last_name}
    except Exception:          # noqa: BLE001  (an older or locked gradebook: ids stand in)
        return {}
