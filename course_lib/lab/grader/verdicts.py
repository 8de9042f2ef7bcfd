"""The checker's verdict as data in the autograded notebook: one output per course test cell, signed.

    out = verdicts.output(record)                     # the trusted grader's record as a test cell's output
    verdicts.seal(nb, secret, "alice", "06_tiles", "06_tiles", submitted="2026-11-30 10:00:00")
    verdicts.read(nb, secret, "alice", "06_tiles", "06_tiles")    # [envelope]: the records grading stored

A test cell's verdict is text for the student and, beside it, an output of the course's own type MIME
holding the checker's record (course_lib.teach.record: each property's result, each problem's kind,
line and hint, the counts measured). nbgrader keeps it with the graded notebook in
``autograded/<student>/<assignment>/``, which is where the class report reads it; nothing is parsed
back from text. What a student hands in cannot pass for one: :func:`seal` (run where the grades are
made, after the grader wrote the test cells' outputs) signs each record of a course test cell with a key
derived from the course's secret seed, over the record and where it belongs (student, assignment,
notebook, cell, the submission's time), and removes this type from every other cell; :func:`read` takes
records only from locked course test cells and only with a valid signature for that very place. A
record holds the hidden shapes' problems: it is the instructor's, and the feedback leaves it out
(nbgrader_hooks). This module reads and writes notebook dicts; it runs no check.
"""
from __future__ import annotations

import hashlib
import hmac
import json

MIME = "application/vnd.course-lib.verdict+json"
MAX_BYTES = 256 * 1024           # a record is a few kB; anything this large is not one of ours
_KEY_LABEL = b"course_lib verdict record\0"


def output(record: dict) -> dict:
    """The display_data output that carries `record` (unsigned: :func:`seal` signs it), with a line of text for
    the front ends that show only known types (JupyterLab, formgrader: nbconvert would warn of ours)."""
    import nbformat
    said = "passed" if record.get("ok") else "not passed"
    text = (f"[the course's record of this verdict ({record.get('exercise')}: {said}), read by "
            "`python -m course_lib instructor report`]")
    return nbformat.v4.new_output("display_data", data={"text/plain": text, MIME: {"record": record}})


def _key(secret: str) -> bytes:
    return hashlib.sha256(_KEY_LABEL + secret.encode()).digest()


def _canonical(envelope: dict) -> bytes:
    return json.dumps({k: v for k, v in envelope.items() if k != "signature"}, sort_keys=True,
                      separators=(",", ":"), ensure_ascii=True).encode()


def sign(envelope: dict, secret: str) -> dict:
    """`envelope` with its signature (HMAC-SHA256 of everything else in it, under the course's key)."""
    return {**envelope, "signature": hmac.new(_key(secret), _canonical(envelope), hashlib.sha256).hexdigest()}


def valid(envelope, secret: str) -> bool:
    """Whether `envelope` carries the signature the course's key gives it."""
    if not isinstance(envelope, dict) or not isinstance(envelope.get("signature"), str):
        return False
    want = hmac.new(_key(secret), _canonical(envelope), hashlib.sha256).hexdigest()
    return hmac.compare_digest(want, envelope["signature"])


def test_key(cell, exercises) -> str | None:
    """The exercise key of a locked course test cell (nbgrader grade cell '<key>_check', `key` in
    `exercises`), else None: the only cells whose outputs the grader writes."""
    meta = (cell.get("metadata") or {}).get("nbgrader") or {}
    key = str(meta.get("grade_id", "")).removesuffix("_check")
    ok = cell.get("cell_type") == "code" and meta.get("grade") is True and meta.get("locked") is True \
        and key in exercises
    return key if ok and str(meta.get("grade_id")) == f"{key}_check" else None


def seal(nb, secret: str, student: str, assignment: str, notebook: str, exercises, submitted=None,
         graded=None) -> list[dict]:
    """Sign the record of each course test cell of `nb` for this place (changed in place) and drop this
    output type from every other cell; the signed envelopes, in cell order."""
    sealed = []
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        key = test_key(cell, exercises)
        kept = []
        for out in cell.get("outputs", []):
            data = out.get("data") or {}
            if MIME not in data:
                kept.append(out)
                continue
            record = (data[MIME] or {}).get("record") if isinstance(data[MIME], dict) else None
            if key is None or not isinstance(record, dict) or record.get("exercise") != key:
                continue                     # a student's display of our type, or a record of another cell
            envelope = sign({"record": record, "student": student, "assignment": assignment, "notebook": notebook,
                             "cell": f"{key}_check", "submitted": submitted, "graded": graded}, secret)
            out["data"] = {**{k: v for k, v in data.items() if k == "text/plain"}, MIME: envelope}
            kept.append(out)
            sealed.append(envelope)
        cell["outputs"] = kept
    return sealed


def read(nb, secret: str, student: str, assignment: str, notebook: str, exercises) -> list[dict]:
    """The signed envelopes of `nb`'s locked course test cells that belong to this student's notebook of this
    assignment (any other is not the grader's: ignored), in cell order."""
    found = []
    for cell in nb.get("cells", []):
        key = test_key(cell, exercises)
        if key is None:
            continue
        for out in cell.get("outputs", []):
            env = (out.get("data") or {}).get(MIME)
            if (valid(env, secret) and env.get("student") == student and env.get("assignment") == assignment
                    and env.get("notebook") == notebook and env.get("cell") == f"{key}_check"
                    and isinstance(env.get("record"), dict) and env["record"].get("exercise") == key):
                found.append(env)
    return found


def inert(value):
    """This type's value as plain JSON (for the sanitizer, which keeps nothing else of a student's
    outputs), or None when it is not a dict of plain JSON within MAX_BYTES: dropped. Its authenticity is
    :func:`read`'s business, not the sanitizer's."""
    if not isinstance(value, dict):
        return None
    try:
        text = json.dumps(value, ensure_ascii=True, allow_nan=False)
    except (TypeError, ValueError):
        return None
    return json.loads(text) if len(text) <= MAX_BYTES else None


def withheld(nb):
    """`nb` without this output type anywhere (the feedback a student gets: a record names hidden shapes)."""
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "code":
            cell["outputs"] = [o for o in cell.get("outputs", []) if MIME not in (o.get("data") or {})]
    return nb
