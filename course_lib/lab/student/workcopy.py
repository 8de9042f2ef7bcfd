"""The student's own copy of the notebooks, so that their edits and the course's updates never collide.

    work = WorkCopy(Path("notebooks"), Path("my-notebooks"))
    report = work.sync()          # copies in the notebooks it does not have yet; overwrites nothing
    print(report)                 # what was added; which notebooks have a newer version, and how to take it
    work.take("05_bank_conflicts.ipynb")   # keeps yours as 05_bank_conflicts.mine-<time>.ipynb, copies the new one

``course-lab`` serves ``my-notebooks/`` (ignored by git), not the tracked ``notebooks/``: a student
edits and saves freely there, and ``git pull`` updates ``notebooks/`` without a conflict. The next
``course-lab`` copies in notebooks that are new and names those whose course version changed since
they were copied; it never overwrites a notebook that is there. Which version each copy started
from is kept in ``my-notebooks/.course-lab.json`` (notebook name -> SHA-256 of the course's file).

The copy sits beside ``notebooks/``, at the same depth in the checkout, so a notebook's relative
links (``../kernels/tile.cu``) work from either; course_lib finds kernels/ and benchmarks/results
from its own location, never from the current folder. This module copies files and words what it
did; it does not start JupyterLab (course_lib.lab does).
"""
from __future__ import annotations

import hashlib
import json
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from ... import paths

RECORD = ".course-lab.json"
DEFAULT_NAME = "my-notebooks"


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@dataclass
class SyncReport:
    folder: Path
    added: list[str] = field(default_factory=list)
    newer: list[tuple[str, bool]] = field(default_factory=list)   # (name, whether the student changed theirs)
    taken: list[tuple[str, str]] = field(default_factory=list)    # (name, where the student's copy went)

    def __str__(self) -> str:
        lines = []
        if self.added:
            import textwrap
            lines += textwrap.wrap(", ".join(self.added), 96, initial_indent="  copied in:  ",
                                   subsequent_indent=" " * 14, break_on_hyphens=False)
        for name, old in self.taken:
            lines.append(f"  updated:    {name} (yours is kept as {old})")
        if self.newer:
            lines.append("  newer in the course than your copy (yours is left as it is):")
            lines += [f"    {name}" + ("" if edited else "  (you have not changed yours)") for name, edited in self.newer]
            names = " ".join(name for name, _ in self.newer)
            lines.append(f"  to take them: course-lab --update {names}")
            lines.append("  (or --update all; a copy you edited is kept beside the new one as NAME.mine-<date-time>.ipynb)")
        return "\n".join(lines)


class WorkCopy:
    """`folder`: the student's notebooks, seeded from and compared with the course's `upstream` folder."""

    def __init__(self, upstream: Path, folder: Path | None = None):
        self.upstream = Path(upstream).resolve()
        self.folder = Path(folder).resolve() if folder else self.upstream.parent / DEFAULT_NAME
        if self.folder == self.upstream:
            raise ValueError(f"the working copy cannot be the course's own folder {self.upstream}")

    def notebooks(self) -> list[Path]:
        return sorted(p for p in self.upstream.glob("*.ipynb") if p.is_file())

    def _record(self) -> dict:
        try:
            data = json.loads((self.folder / RECORD).read_text())
            return data if isinstance(data, dict) else {}
        except (OSError, ValueError):
            return {}

    def _save_record(self, record: dict) -> None:
        text = json.dumps(dict(sorted(record.items())), indent=1) + "\n"
        tmp = self.folder / (RECORD + ".tmp")
        tmp.write_text(text)
        tmp.replace(self.folder / RECORD)

    def sync(self) -> SyncReport:
        """Copy in the notebooks the folder lacks; list those whose course version changed."""
        self.folder.mkdir(parents=True, exist_ok=True)
        record, report = self._record(), SyncReport(self.folder)
        for src in self.notebooks():
            mine, now = self.folder / src.name, digest(src)
            if not mine.exists():
                shutil.copyfile(src, mine)
                record[src.name] = now
                report.added.append(src.name)
            elif record.get(src.name) != now:
                if digest(mine) == now:          # already the same file (copied by hand, or a lost record)
                    record[src.name] = now
                else:
                    report.newer.append((src.name, digest(mine) != record.get(src.name)))
        self._save_record(record)
        return report

    def take(self, names) -> SyncReport:
        """Replace the student's copies of `names` ('all': every one with a newer course version) by
        the course's, keeping each old copy beside it. Raises ValueError naming what is unknown."""
        before = self.sync()
        wanted = [n for n, _ in before.newer] if list(names) == ["all"] else [Path(n).name for n in names]
        wanted = [n if n.endswith(".ipynb") else n + ".ipynb" for n in wanted]
        unknown = [n for n in wanted if not (self.upstream / n).is_file()]
        if unknown:
            have = ", ".join(p.name for p in self.notebooks())
            raise ValueError(f"the course has no notebook {', '.join(unknown)} (it has: {have})")
        record, report = self._record(), SyncReport(self.folder, added=before.added)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        for name in wanted:
            mine, src = self.folder / name, self.upstream / name
            if mine.exists() and digest(mine) not in (digest(src), record.get(name)):     # edited: keep it
                kept = paths.beside(mine, "mine", stamp)
                mine.replace(kept)
                report.taken.append((name, kept.name))
            shutil.copyfile(src, mine)
            record[name] = digest(src)
        self._save_record(record)
        report.newer = [(n, e) for n, e in before.newer if n not in wanted]
        return report
