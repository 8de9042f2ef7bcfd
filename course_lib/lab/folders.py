"""Folders a command writes into, checked before anything is written, and backups of files it replaces.

    out = folders.writable("--out", args.out)    # the folder, created; or FolderProblem saying why not
    kept = folders.backup(path)                  # path copied to NAME.before-<date-time>.EXT first; None if new
    kept = folders.backup(path, into=keep_dir)   # the same, the copy in keep_dir (created) instead of beside it
    kept = folders.keep_if_changed(path, text)   # the same, only when `text` would change the file
    print(folders.os_problem(exc))               # an OSError as one line: the path, what is wrong, what to do

A command given a file where it wants a folder, or a folder it cannot write (read-only, someone else's),
stops with one line naming the option, the path and what to do, instead of an OSError's traceback
halfway through writing. :func:`backup` keeps an instructor's edited file before a tool writes a new one
over it; a caller whose folder something else hands out as it is (nbgrader's source/<assignment>/ is
released file by file) keeps it elsewhere with ``into``. This module neither parses command lines nor
decides what to write.
"""
from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path


class FolderProblem(ValueError):
    """A folder named on the command line cannot be written; the message says which and what to do."""


def writable(option: str, path) -> Path:
    """`path` (``~`` expanded) as a folder this user can write, created with its parents if missing."""
    folder = Path(path).expanduser()
    if folder.exists() and not folder.is_dir():
        raise FolderProblem(f"{option} {path} is a file, not a folder: name a folder (it is created if missing)")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):       # a read-only or foreign folder fails here, not halfway
            pass
    except FileExistsError:
        above = next(p for p in folder.parents if p.exists())
        raise FolderProblem(f"{option} {path}: {above} is a file, not a folder") from None
    except OSError as exc:
        raise FolderProblem(f"{option} {path}: cannot write there ({exc.strerror or exc}); name a folder you can "
                            "write, e.g. one in your home folder") from None
    return folder


def os_problem(exc: OSError) -> str:
    """An OSError a command met as one line a person can act on: the path, what is wrong with it, what to do."""
    where = exc.filename or "a file"
    if isinstance(exc, IsADirectoryError):
        return f"{where} is a folder, where a file was expected: remove or rename that folder, then run it again"
    if isinstance(exc, NotADirectoryError):
        return f"{where}: a part of this path is a file, where a folder was expected"
    if isinstance(exc, PermissionError):
        return f"{where}: not allowed ({exc.strerror}): run it as a user who may read and write there"
    if isinstance(exc, FileNotFoundError):
        return f"{where}: no such file or folder"
    return f"{where}: {exc.strerror or exc}"


def backup(path: Path, into: Path | None = None) -> Path | None:
    """Copy an existing `path` to NAME.before-<date-time>.EXT beside it, or in folder `into` (created),
    and return that; None when there is nothing to keep."""
    path = Path(path)
    if not path.is_file():
        return None
    folder = path.parent if into is None else Path(into)
    folder.mkdir(parents=True, exist_ok=True)
    kept = folder / f"{path.stem}.before-{time.strftime('%Y%m%d-%H%M%S')}{path.suffix}"
    n = 1
    while kept.exists():                                # two runs in one second keep both
        kept = folder / f"{path.stem}.before-{time.strftime('%Y%m%d-%H%M%S')}-{n}{path.suffix}"
        n += 1
    shutil.copy2(path, kept)
    return kept


def keep_if_changed(path: Path, text: str, into: Path | None = None) -> Path | None:
    """:func:`backup` of `path` (into `into`) when writing `text` there would change it (an instructor's
    edit, or an older export); None when it is new or would be the same bytes."""
    path = Path(path)
    try:
        if path.read_bytes() in (text.encode(), (text + "\n").encode()):
            return None
    except OSError:
        return None
    return backup(path, into)
