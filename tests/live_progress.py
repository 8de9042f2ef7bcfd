"""What a long test is doing, shown while it runs: ``say("creating a fresh virtual environment")``.

A fresh install takes minutes, and pytest shows nothing of a test until it ends. ``say`` puts a line in
pytest's progress output at once, with the default output capture: in a run on one process through the
terminal reporter (capture suspended for that line), on an xdist worker by appending it to a file that the
controlling process (tests/conftest.py, :func:`start` and :func:`stop`) reads every second and prints.
Outside pytest it prints to stderr. This module only reports; it times nothing.
"""
from __future__ import annotations

import os
import sys
import tempfile
import threading
import time

ENV = "COURSE_TEST_PROGRESS"          # the file workers append to (set by the controlling process)
_config: list = [None]                # the controlling process's pytest config
_tail: dict = {}


def say(what: str) -> None:
    """Show `what` (one line, prefixed with the time) in pytest's output now."""
    line = f"{time.strftime('%H:%M:%S')} {what}"
    path, worker = os.environ.get(ENV), os.environ.get("PYTEST_XDIST_WORKER")
    if worker and path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(f"[{worker}] {line}\n")
        return
    config = _config[0]
    reporter = config and config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None:
        print(line, file=sys.stderr, flush=True)
        return
    capture = config.pluginmanager.get_plugin("capturemanager")
    with capture.global_and_fixture_disabled() if capture else _nothing():
        reporter.write_line(f"    {line}")


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def start(config) -> None:
    """In the controlling process: remember `config`; under xdist, make the file and print what workers add."""
    _config[0] = config
    if not getattr(config.option, "numprocesses", None):
        return
    fd, path = tempfile.mkstemp(prefix="course-test-progress-", suffix=".txt")
    os.close(fd)
    os.environ[ENV] = path
    stop_event = threading.Event()

    def tail():
        with open(path, encoding="utf-8") as f:
            while True:
                stopping = stop_event.wait(1.0)
                reporter = config.pluginmanager.get_plugin("terminalreporter")    # registered after this starts
                for line in f.readlines() if reporter is not None else ():
                    reporter.write_line(f"    {line.rstrip()}")
                if stopping:
                    return

    thread = threading.Thread(target=tail, name="course-test-progress", daemon=True)
    _tail.update(path=path, stop=stop_event, thread=thread)
    thread.start()


def stop() -> None:
    """Print what is left to print, and remove the file."""
    if _tail:
        _tail["stop"].set()
        _tail["thread"].join(5)
        os.environ.pop(ENV, None)
        try:
            os.unlink(_tail["path"])
        except OSError:
            pass
        _tail.clear()
