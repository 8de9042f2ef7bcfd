"""What of a submission stays in autograded/: its notebooks, nothing else a student handed in.

    handed_in.keep_notebooks_only(Path("course/autograded/mallory/03_columns"))   # ['notes.html', ...] removed

``nbgrader autograde`` copies every file a student handed in beside the notebooks into autograded/, and
formgrader serves that folder's files from the instructor's own Jupyter server
(``/formgrader/submissions/<id>/<file>``, with no sandboxing header): a student's ``notes.html`` or an SVG with
a script there runs as the instructor the moment it is opened. The course's exercises are notebooks, so
:func:`keep_notebooks_only` removes everything else from a submission's autograded folder before its notebooks
are graded (the sandboxed run then has only the notebooks too); generate_feedback copies from autograded/,
so the feedback holds none either. submitted/ keeps what was handed in, as nbgrader collected it: not a folder
to open in a browser (docs/INSTRUCTORS.md, section 6). One file beside the notebooks stays: nbgrader's own
``timestamp.txt`` at the top (a line of text, served as text), by which the next ``autograde`` knows that a
newer submission replaces this one: without it a resubmission is never graded. This module deletes files only
under the folder it is given and never follows a link out of it.
"""
from __future__ import annotations

import os
from pathlib import Path


TIMESTAMP = "timestamp.txt"      # nbgrader's: when the submission was handed in (coursedir.get_existing_timestamp)


def _nbgraders_timestamp(folder: Path, path: Path) -> bool:
    """Whether `path` is nbgrader's timestamp.txt at the top of the submission: a plain file of one short line."""
    return (path.parent == folder and path.name == TIMESTAMP and not path.is_symlink() and path.is_file()
            and path.stat().st_size <= 64)


def keep_notebooks_only(folder) -> list[str]:
    """Remove every file under `folder` that is not a notebook (links included, never followed) and the folders
    left empty, but nbgrader's timestamp.txt at the top; the removed paths, relative to `folder`."""
    folder, removed = Path(folder), []
    if not folder.is_dir() or folder.is_symlink():
        return removed
    for root, dirs, files in os.walk(folder, topdown=False):
        here = Path(root)
        for name in files:
            path = here / name
            if _nbgraders_timestamp(folder, path):
                continue
            if path.suffix != ".ipynb" or path.is_symlink():
                path.unlink()
                removed.append(path.relative_to(folder).as_posix())
        for name in dirs:
            path = here / name
            if path.is_symlink():
                path.unlink()
                removed.append(path.relative_to(folder).as_posix())
            elif not any(path.iterdir()):
                path.rmdir()
    return sorted(removed)
