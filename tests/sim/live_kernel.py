"""Test helper: a real IPython kernel, driven through jupyter_client as JupyterLab drives one.

    with LiveKernel(ROOT) as kernel:                       # imports ROOT's course_lib
        kernel.run("import numpy as np, course_lib as cl")            # the execute_reply's content
        reply = kernel.interrupt_after("for i in range(50): r = k.simulate(a)", 2.0)   # the stop button
        kernel.run(INTERRUPT_AT + "stop = interrupt_at('course_lib.sim.executor:run_batch', 2, after=True)")
        kernel.rss()                                       # the kernel process's resident set, bytes

The stop button of JupyterLab is the kernel manager's ``interrupt_kernel()``: SIGINT to the kernel,
which Python turns into a KeyboardInterrupt wherever the main thread is. To stop a run at one chosen
point instead of wherever a timer lands, ``INTERRUPT_AT`` defines ``interrupt_at(target, nth, after)``
in the kernel: at the nth call of ``target`` ('module:attribute.path'), before it runs or once it has
returned, the kernel sends itself the same SIGINT (``signal.raise_signal``). The wrapper drops the
call's arguments and result first, so that its own frame, which the kept traceback holds, holds
nothing the run would not.

Used by tests/sim/test_interrupted_kernel.py and benchmarks/interrupt_memory.py.
"""
from __future__ import annotations

import json
import os
import queue
import sys
import tempfile
import time
from pathlib import Path

import psutil
from jupyter_client import KernelManager
from jupyter_client.kernelspec import KernelSpecManager

MiB = 1 << 20

INTERRUPT_AT = r'''
import functools as _functools, importlib as _importlib, signal as _signal

def interrupt_at(target, nth=1, after=False):
    """SIGINT to this kernel, as the stop button sends it, at the nth call of target ('module:attr.path')."""
    module, path = target.split(":")
    owner = _importlib.import_module(module)
    *parents, name = path.split(".")
    for parent in parents:
        owner = getattr(owner, parent)
    original, calls = vars(owner)[name], [0]

    def restore():
        setattr(owner, name, original)

    @_functools.wraps(original)
    def trigger(*args, **kwargs):
        calls[0] += 1
        if calls[0] == nth and not after:
            restore()
            del args, kwargs
            _signal.raise_signal(_signal.SIGINT)
        result = original(*args, **kwargs)
        if calls[0] == nth and after:
            restore()
            del args, kwargs, result
            _signal.raise_signal(_signal.SIGINT)
        return result
    setattr(owner, name, trigger)
    return restore
'''


class LiveKernel:
    """An ipykernel started by jupyter_client with `python` (this one by default), importing `root`'s
    course_lib first (PYTHONPATH), with the progress display on and no COURSE_LIB_TRACEBACK."""

    def __init__(self, root, python=sys.executable, timeout=600):
        self.timeout = timeout
        self._specs = tempfile.TemporaryDirectory(prefix="live-kernel-")
        spec = Path(self._specs.name, "course")
        spec.mkdir()
        (spec / "kernel.json").write_text(json.dumps({
            "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "course", "language": "python", "interrupt_mode": "signal"}))
        env = {k: v for k, v in os.environ.items() if k not in ("COURSE_LIB_TRACEBACK", "COURSE_LIB_PROGRESS")}
        env.update(PYTHONPATH=str(root), COURSE_LIB_BACKEND="sim", PYDEVD_DISABLE_FILE_VALIDATION="1")
        self.manager = KernelManager(kernel_name="course",
                                     kernel_spec_manager=KernelSpecManager(kernel_dirs=[self._specs.name]))
        self._log = open(Path(self._specs.name, "kernel.log"), "w")
        self.manager.start_kernel(env=env, stdout=self._log, stderr=self._log)
        self.client = self.manager.client()
        self.client.start_channels()
        self.client.wait_for_ready(timeout=120)
        self.process = psutil.Process(self.manager.provisioner.pid)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        self.client.stop_channels()
        self.manager.shutdown_kernel(now=True)
        self._log.close()
        self._specs.cleanup()

    def rss(self) -> int:
        return self.process.memory_info().rss

    def run(self, code: str) -> dict:
        """Run a cell to its end: the execute_reply's content (status, and ename/traceback on an error)."""
        return self._reply(self.client.execute(code))

    def interrupt_after(self, code: str, seconds: float) -> dict:
        """Run a cell and press the stop button `seconds` into it."""
        msg_id = self.client.execute(code)
        time.sleep(seconds)
        self.manager.interrupt_kernel()
        return self._reply(msg_id)

    def log(self) -> str:
        self._log.flush()
        return Path(self._log.name).read_text()[-4000:]

    def _reply(self, msg_id) -> dict:
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                reply = self.client.get_shell_msg(timeout=max(1.0, deadline - time.monotonic()))
            except queue.Empty:
                raise TimeoutError(f"no reply from the kernel in {self.timeout} s; its log:\n{self.log()}") from None
            if reply["parent_header"].get("msg_id") == msg_id:
                self._drain()
                return reply["content"]

    def _drain(self):
        """Read what the kernel published (streams, the progress widget's messages) and drop it."""
        while True:
            try:
                self.client.get_iopub_msg(timeout=0.05)
            except queue.Empty:
                return
