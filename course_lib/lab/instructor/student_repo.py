"""The folder ``instructor publish`` writes the student repository into, and what it may change there.

    dest = student_repo.open_out(Path("../transpose-course"), "transpose-course")   # or PublishError
    plan = student_repo.changes(dest, {"README.md": b"...", ...}, executable=set())  # or PublishError
    print("\\n".join(student_repo.describe(dest, plan, every=True)))
    student_repo.apply(dest, plan, files, executable, commit="1a2b...")

Publish writes only into an empty folder (a new one, or a clone of an empty repository: nothing but
``.git``) or into one it wrote before: a folder whose :data:`MANIFEST` lists every file publish wrote
there, with its SHA-256, and the instructor commit it came from. Anything else (an unrelated repository, a
clone of the instructor repository, a file) is refused before any work, saying why. In a previous publish
it adds the release's new files, overwrites and removes only files the manifest lists, and only while
each is as publish wrote it or, in a git repository, committed as it is (git keeps it); a file that is
there but publish did not write, or that was edited and not committed, makes it refuse, naming the files.
Untracked and ignored files it did not write are never touched. It never writes through a symbolic link.
The manifest is written before the files (accepting old and new contents, should the run be interrupted)
and again, final, after them. This module neither reads the instructor repository nor checks contents.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

MANIFEST = ".course-publish.json"
ABOUT = ("written by `python -m course_lib instructor publish`: the files it wrote here (SHA-256) and the "
         "instructor repository's commit they came from; the next publish changes or removes only these files")
HEX = re.compile(r"[0-9a-f]{64}")


class PublishError(ValueError):
    """Publishing would leak a solution or lose someone's file; the message says which and what to do."""


@dataclass
class Out:
    path: Path
    ours: dict[str, tuple[str, ...]] | None       # path -> the SHA-256s publish wrote there (None: a fresh folder)
    commit: str | None = None                     # the instructor commit of the previous publish
    git: bool = False


@dataclass
class Plan:
    add: list[str] = field(default_factory=list)
    change: list[str] = field(default_factory=list)
    remove: list[str] = field(default_factory=list)
    same: list[str] = field(default_factory=list)
    committed_edits: list[str] = field(default_factory=list)   # changed or removed, edited but committed


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _git(folder: Path, *args) -> str:
    try:
        r = subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise PublishError(f"publish: git could not read {folder} ({exc})\nhint: install git, or give an empty "
                           "folder") from None
    if r.returncode:
        raise PublishError(f"publish: `git {' '.join(args[:2])}` failed in {folder}: {r.stderr.strip()[:300]}\n"
                           "hint: give an empty folder, or repair that repository") from None
    return r.stdout


# ---------------------------------------------------------------------------- which folder

def open_out(out: Path, course_id: str) -> Out:
    """`out` as a place to publish into: an empty or missing folder, or a previous publish of `course_id`
    (its manifest read). Anything else raises PublishError saying what it is and what to give instead."""
    hint = ("hint: name an empty folder (it is created if missing), e.g. --out ../transpose-course, or a clone "
            "of the student repository, which holds the manifest a previous publish wrote")
    if out.exists() and not out.is_dir():
        raise PublishError(f"publish: --out {out} is a file, not a folder\n{hint}")
    if not out.exists():
        above = next(p for p in out.parents if p.exists())
        if not above.is_dir() or not os.access(above, os.W_OK | os.X_OK):
            raise PublishError(f"publish: --out {out} cannot be made: {above} is "
                               f"{'a file' if not above.is_dir() else 'not writable for you'}\n{hint}")
        return Out(out, None)
    if (out / MANIFEST).exists():
        return _previous(out, course_id)
    entries = sorted(p.name for p in out.iterdir())
    git = (out / ".git").exists()
    if not entries or (entries == [".git"] and not _git(out, "ls-files", "-z").strip("\0")):
        return Out(out, None, git=git)
    what = "a git repository" if git else "a folder"
    if any(out.glob("exercises/*/solution.cu")):
        what += " holding exercise solutions (a clone of the instructor repository?)"
    shown = ", ".join(entries[:6]) + (f" and {len(entries) - 6} more" if len(entries) > 6 else "")
    raise PublishError(
        f"publish: --out {out} is {what} that publish did not write: it holds {shown}, and no {MANIFEST}.\n"
        "publish writes only into an empty folder or a previous publish of this course, so that it never deletes "
        f"what it did not write.\n{hint}; to update a student repository published before the manifest existed, "
        "publish into an empty folder, move that repository's .git into it (mv OLD/.git NEW/) and let git show "
        "what changed")


def _previous(out: Path, course_id: str) -> Out:
    where = out / MANIFEST
    try:
        data = json.loads(where.read_text(encoding="utf-8"))
        files = data["files"]
        if data.get("course") != course_id:
            raise ValueError(f"it is course {data.get('course')!r}'s, not {course_id!r}'s")
        ours = {}
        for rel, digests in files.items():
            digests = (digests,) if isinstance(digests, str) else tuple(digests)
            if not safe_path(rel) or not digests or not all(isinstance(d, str) and HEX.fullmatch(d) for d in digests):
                raise ValueError(f"its entry {rel!r} is not a path inside the folder with a SHA-256")
            ours[rel] = digests
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise PublishError(f"publish: {where} is not a manifest publish wrote for this course ({exc})\n"
                           "hint: restore it (in a clone of the student repository: git checkout -- "
                           f"{MANIFEST}), or publish into an empty folder") from None
    return Out(out, ours, data.get("commit"), (out / ".git").exists())


def safe_path(rel) -> bool:
    """A relative posix path inside the folder, outside .git, with no '..', '.' or empty part."""
    parts = rel.split("/") if isinstance(rel, str) else [""]
    return (rel != MANIFEST and "\\" not in rel and parts[0] != ".git"
            and all(p not in ("", ".", "..") for p in parts))


# ---------------------------------------------------------------------------- what changes

def _uncommitted(out: Out) -> tuple[set[str], set[str]]:
    """(tracked paths, paths with uncommitted changes or untracked) of a git `out`; ({}, {}) otherwise."""
    if not out.git:
        return set(), set()
    tracked = set(filter(None, _git(out.path, "ls-files", "-z").split("\0")))
    status = _git(out.path, "status", "--porcelain", "-z", "--untracked-files=all", "--no-renames")
    return tracked, {entry[3:] for entry in status.split("\0") if len(entry) > 3}


def _through_link(root: Path, rel: str) -> bool:
    p = root
    for part in rel.split("/"):
        p = p / part
        if p.is_symlink():
            return True
    return False


def _is_executable(p: Path) -> bool:
    return bool(p.stat().st_mode & 0o100)


def changes(out: Out, files: dict[str, bytes], executable: set[str]) -> Plan:
    """What publishing `files` ({path: bytes}) into `out` adds, changes and removes; PublishError, naming
    them, when that would overwrite or remove a file publish did not write as it is now."""
    ours, plan, refused = out.ours or {}, Plan(), []
    tracked, dirty = _uncommitted(out)

    def may_replace(rel: str, p: Path) -> bool:
        if sha(p.read_bytes()) in ours.get(rel, ()):
            return True
        if out.git and rel in ours and rel in tracked and rel not in dirty:
            plan.committed_edits.append(rel)
            return True
        reason = ("edited since the last publish, and not committed" if rel in ours and out.git else
                  "edited since the last publish" if rel in ours else "there already, and publish did not write it")
        refused.append(f"{rel}: {reason}")
        return False

    for rel, data in sorted(files.items()):
        p = out.path / rel
        if _through_link(out.path, rel) or p.is_dir():
            refused.append(f"{rel}: {'a symbolic link' if _through_link(out.path, rel) else 'a folder'} "
                           "is there, where the release has a file")
        elif not p.exists():
            plan.add.append(rel)
        elif sha(p.read_bytes()) == sha(data) and _is_executable(p) == (rel in executable):
            plan.same.append(rel)
        elif may_replace(rel, p):
            plan.change.append(rel)
    for rel in sorted(set(ours) - set(files)):
        p = out.path / rel
        if _through_link(out.path, rel):
            refused.append(f"{rel}: a symbolic link; publish removes only files it wrote")
        elif p.is_file() and may_replace(rel, p):
            plan.remove.append(rel)
    if refused:
        keep = ("commit them there (git add -A && git commit) and git keeps them, or move them away"
                if out.git else "move them away, or give an empty folder")
        raise PublishError(f"publish: in {out.path}, publishing would overwrite or remove files publish did not "
                           "write as they are now, so it stops (nothing written):\n  " + "\n  ".join(refused[:30])
                           + (f"\n  ... and {len(refused) - 30} more" if len(refused) > 30 else "")
                           + f"\nhint: {keep}; then publish again")
    return plan


def describe(out: Out, plan: Plan, every: bool = False) -> list[str]:
    """What the plan does, one line per file (`every`, or when there are few), else per folder."""
    what = (f"a previous publish (of {out.commit[:12] if out.commit else 'an unrecorded commit'})" if out.ours is not None
            else "an empty folder")
    lines = [f"publish into {out.path}, {what}: {len(plan.add)} to add, {len(plan.change)} to change, "
             f"{len(plan.remove)} to remove, {len(plan.same)} unchanged"]
    listed = [("add", plan.add), ("change", plan.change), ("remove", plan.remove)]
    if every or sum(len(x) for _, x in listed) <= 40:
        lines += [f"  {verb:<7}{rel}" + ("   (an edit committed there: git keeps it)" if rel in plan.committed_edits
                                         else "") for verb, rels in listed for rel in rels]
    else:
        for verb, rels in listed:
            counts: dict[str, int] = {}
            for rel in rels:
                top = rel.split("/", 1)[0] + ("/" if "/" in rel else "")
                counts[top] = counts.get(top, 0) + 1
            lines += [f"  {verb:<7}{top} ({n} file{'s' if n > 1 else ''})" for top, n in sorted(counts.items())]
        lines.append("  (--dry-run lists every file)")
    return lines


# ---------------------------------------------------------------------------- writing

def _manifest(out: Out, files: dict[str, bytes], course_id: str, commit, uncommitted, final: bool) -> str:
    entries = {rel: sha(data) for rel, data in files.items()}
    if not final:           # an interrupted publish leaves files old or new: the next one accepts both
        for rel, old in (out.ours or {}).items():
            entries[rel] = sorted(set(old) | ({entries[rel]} if rel in entries else set()))
    return json.dumps({"about": ABOUT, "course": course_id, "commit": commit, "uncommitted": sorted(uncommitted),
                       "files": dict(sorted(entries.items()))}, indent=1) + "\n"


def apply(out: Out, plan: Plan, files: dict[str, bytes], executable: set[str], course_id: str,
          commit: str | None, uncommitted=()) -> None:
    """Carry out `plan` in `out`: the manifest (interim), removals, files, then the final manifest."""
    out.path.mkdir(parents=True, exist_ok=True)
    (out.path / MANIFEST).write_text(_manifest(out, files, course_id, commit, uncommitted, final=False))
    for rel in plan.remove:
        p = out.path / rel
        p.unlink()
        for folder in p.parents:            # the folders this removal left empty
            if folder == out.path or any(folder.iterdir()):
                break
            folder.rmdir()
    for rel in plan.add + plan.change:
        p = out.path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(files[rel])
    for rel in plan.add + plan.change + plan.same:
        p = out.path / rel
        mode = p.stat().st_mode
        p.chmod(mode | (mode & 0o444) >> 2 if rel in executable else mode & ~0o111)
    (out.path / MANIFEST).write_text(_manifest(out, files, course_id, commit, uncommitted, final=True))
