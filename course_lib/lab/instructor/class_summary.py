"""A class's verdicts summed up per exercise: who passed, what went wrong most, the counts, the variants.

    s = class_summary.exercise(book, "06_tiles", "tile_32x8")
    s.students, s.passed, s.passed_first       # final submissions; first tries (resubmissions counted)
    s.problems                                 # [Problem]: most students first
    s.counts                                   # {count name: [value per student]} (the key counts)
    s.variants                                 # [(variant, students, passed)]; s.worse: the one that did worse

Every number is a count of students (one final submission each, and its first try where the course kept
one: classbook), taken from the records grading stored. A problem is the same problem for two students when
its kind, its name (the property, the error) and, for wrong results and stops, the course's hint are the
same; it is shown with that hint and an example line of code (comments and strings removed, no name: the
most common such line among those students). Problems found only on the hidden shapes are their own rows.
This module counts; it draws nothing and writes no file.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

# the key counts, in the order the report shows them: (record's name, what the report calls it)
KEY_COUNTS = (
    ("sectors per request, global loads", "sectors per request, global loads"),
    ("sectors per request, global stores", "sectors per request, global stores"),
    ("wavefronts per request, shared loads", "wavefronts per request, shared loads"),
    ("wavefronts per request, shared stores", "wavefronts per request, shared stores"),
    ("wavefronts per request, cp.async writes into shared memory", "wavefronts per request, cp.async writes"),
    ("instructions per element", "instructions per element"),
    ("share wrong", "share of elements wrong"),
)
DEFAULT_VARIANT = "default"


@dataclass
class Problem:
    label: str                    # what the report calls it: the property's name, "wrong result", ...
    kind: str
    hidden: bool
    students: int = 0             # final submissions that have it
    first: int = 0                # first tries that had it
    hint: str = ""
    example: str | None = None    # a line of code it blamed, anonymised
    line: int | None = None


@dataclass
class Summary:
    assignment: str
    exercise: str
    students: int = 0
    passed: int = 0
    passed_first: int = 0
    resubmitted: int = 0
    problems: list = field(default_factory=list)
    counts: dict = field(default_factory=dict)
    counts_passed: dict = field(default_factory=dict)     # {name: [True/False per value]}: the value's student passed
    variants: list = field(default_factory=list)
    worse: str | None = None


def _group(p: dict, hidden: bool) -> tuple:
    by_hint = p.get("kind") not in ("property",)
    return (hidden, p.get("kind", ""), p.get("name", ""), p.get("hint", "") if by_hint else "")


def _label(p: dict) -> str:
    kind, name = p.get("kind", ""), p.get("name", "")
    words = {"stopped": f"stopped by the simulator ({name})" if name else "stopped by the simulator",
             "wrong result": "wrong result", "kernel": "no kernel to check", "footprint": "moves more than its share",
             "compile": "does not compile", "refused": "refused (not the exercise cell's CUDA)",
             "copied": "a course solution handed in", "timeout": "too slow to grade", "grader": "the checker stopped",
             "gpu": "wrong on the GPU"}
    return name if kind == "property" else words.get(kind, kind or "problem")


def _problems_of(record: dict) -> list[tuple[tuple, dict]]:
    """(group key, problem) of a record, the hidden shapes' apart; each group once per record."""
    out, seen = [], set()
    for hidden, problems in ((False, record.get("problems") or []),
                             (True, (record.get("hidden") or {}).get("problems") or [])):
        for p in problems:
            if isinstance(p, dict) and (key := _group(p, hidden)) not in seen:
                seen.add(key)
                out.append((key, p))
    return out


def ranked_problems(final: list, first: list) -> list[Problem]:
    """Problems over the final entries (students counted once each), with their first tries' counts;
    most students first, then most first tries, then by name."""
    groups, hints, examples = {}, {}, {}
    for e in final:
        for key, p in _problems_of(e.record):
            g = groups.setdefault(key, Problem(("hidden shapes: " if key[0] else "") + _label(p), p.get("kind", ""),
                                              key[0]))
            g.students += 1
            hints.setdefault(key, Counter())[p.get("hint", "")] += 1
            if p.get("code"):
                examples.setdefault(key, Counter())[(p["code"], p.get("line"))] += 1
    for e in first:
        for key, p in _problems_of(e.record):
            if key not in groups:
                groups[key] = Problem(("hidden shapes: " if key[0] else "") + _label(p), p.get("kind", ""), key[0])
                hints.setdefault(key, Counter())[p.get("hint", "")] += 1
                if p.get("code"):
                    examples.setdefault(key, Counter())[(p["code"], p.get("line"))] += 1
            groups[key].first += 1
    for key, g in groups.items():
        g.hint = _most_common(hints.get(key))
        best = _most_common(examples.get(key))
        g.example, g.line = best if best else (None, None)
    return sorted(groups.values(), key=lambda g: (-g.students, -g.first, g.hidden, g.label, g.hint))


def _most_common(counter: Counter | None):
    """The most common value, ties broken by its sorted order (the same report every run)."""
    if not counter:
        return None
    top = max(counter.values())
    return sorted((k for k, n in counter.items() if n == top), key=lambda k: str(k))[0]


def key_counts(entries: list) -> tuple[dict, dict]:
    """({count name: [value per entry that has it]}, {count name: [whether that entry passed]})."""
    values, passed = {}, {}
    for e in entries:
        counts = dict(e.record.get("counts") or {})
        if counts.get("elements"):
            counts["share wrong"] = round(counts.get("elements wrong", 0) / counts["elements"], 4)
        for name, shown in KEY_COUNTS:
            v = counts.get(name)
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                values.setdefault(shown, []).append(float(v))
                passed.setdefault(shown, []).append(e.ok)
    return values, passed


def variants(entries: list) -> tuple[list, str | None]:
    """([(variant, students, passed)] sorted by name, the variant with the lowest share passed when the
    class had more than one and their shares differ; else None)."""
    by = {}
    for e in entries:
        name = e.record.get("variant") or DEFAULT_VARIANT
        n, ok = by.get(name, (0, 0))
        by[name] = (n + 1, ok + e.ok)
    rows = [(name, n, ok) for name, (n, ok) in sorted(by.items())]
    shares = {name: ok / n for name, n, ok in rows}
    if len(rows) < 2 or len(set(shares.values())) < 2:
        return rows, None
    low = min(shares.values())
    return rows, ", ".join(name for name, _, _ in rows if shares[name] == low)


def exercise(book, assignment: str, key: str) -> Summary:
    """The summary of exercise `key` in `assignment` (see the module's docstring)."""
    final = sorted((e for e in book.final if e.assignment == assignment and e.exercise == key),
                   key=lambda e: e.student)
    first = [book.first.get(e.key, e) for e in final]
    s = Summary(assignment, key, students=len(final), passed=sum(e.ok for e in final),
                passed_first=sum(e.ok for e in first),
                resubmitted=sum(book.attempts.get(e.key, 1) > 1 for e in final))
    s.problems = ranked_problems(final, first)
    s.counts, s.counts_passed = key_counts(final)
    s.variants, s.worse = variants(final)
    return s


def summaries(book) -> list[Summary]:
    """Every exercise of every assignment the book holds, in course order."""
    return [exercise(book, a, k) for a in book.assignments() for k in book.exercises(a)]
