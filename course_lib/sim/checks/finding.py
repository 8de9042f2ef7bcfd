"""A Finding: something suspicious in a launch that is not fatal (a read of never-written shared memory,
a copy nobody waited for, a note on what the counts follow), as SimRun.warnings lists them.

Races are ``races.Race`` / ``async_copy.AsyncRace``; errors that stop a launch are course_lib exceptions.
"""
from __future__ import annotations

import html
from dataclasses import dataclass


@dataclass(repr=False)
class Finding:
    """Something suspicious that is not fatal: e.g. a read of never-written shared memory."""
    kind: str
    line: int
    message: str
    count: int
    thread: tuple
    block: tuple
    hint: str = ""

    def __str__(self):
        if self.thread is None:      # about the code, not about one thread (machine code notes)
            text = (f"line {self.line}: " if self.line else "") + self.message
        else:
            text = (f"line {self.line}: {self.message} — {self.count} time(s), first by thread "
                    f"{self.thread} of block {self.block}")
        return text + (f"\n  hint: {self.hint}" if self.hint else "")

    # A notebook shows a list of findings through repr: the sentence a student reads, not the fields
    def __repr__(self):
        return f"[{self.kind}] {self}"

    def _repr_html_(self):
        return f"<pre><b>{html.escape(self.kind)}</b>: {html.escape(str(self))}</pre>"

