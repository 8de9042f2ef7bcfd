"""A Jupyter kernel in the sandbox, in a box, and a client that takes at most the box's output from it.

    Execute.kernel_manager_class = kernel.manager_class(b, folder, runtime)   # one box, one submission
    # nbclient starts it; its clients count every byte that comes back (b.output); past the bound b stops

The kernel runs in course_lib.lab.grader.sandbox with a copy of `folder` as its cwd and its ipc sockets in the
sandbox's own tmpfs (sandbox.KERNEL_DIR): nothing the notebook does can write to the grader's disk, not even
through its sockets' folder. The grader reaches the sockets through /proc/<the sandbox's init>/root, and the
connection file (written by jupyter_client in `runtime`) is bound read-only. Each socket of the client refuses
any single message over the output bound (zmq's MAXMSGSIZE: such a message is never received, the connection
drops, and a monitor of the socket stops the box), and every message received is counted before it is
deserialized: past the bound the box stops the sandbox and the message is dropped, so nbclient sees a dead
kernel. Importing this module needs jupyter_client (the ``[instructor]`` extra); it knows nothing of nbgrader.
"""
from __future__ import annotations

import asyncio
import functools
import subprocess
from queue import Empty

import zmq
import zmq.asyncio
from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.channels import AsyncZMQSocketChannel
from jupyter_client.manager import AsyncKernelManager
from traitlets import default
from zmq.utils.monitor import parse_monitor_message

from . import sandbox
from .box import Box

SIGNATURE_SLACK = 64 * 1024         # a message's header, signature and metadata, over its content


@functools.lru_cache(maxsize=None)
def _context(limit: int) -> zmq.asyncio.Context:
    """A zmq context whose every socket refuses a message over `limit` bytes (one per bound, kept for the process
    as jupyter_client keeps its own: never terminated while a socket might be open)."""
    context = zmq.asyncio.Context()
    context.setsockopt(zmq.MAXMSGSIZE, limit)
    return context


class SandboxedKernelManager(AsyncKernelManager):
    """A kernel started inside the sandbox, in `box` (class attributes: one class per submission)."""
    box: Box
    folder, runtime, env = "", "", {}
    ending = False                      # asked to shut down: its sockets' disconnects are its own, not a drop

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.transport, self.ip = "ipc", f"{sandbox.KERNEL_DIR}/kernel"     # the sockets' names in the sandbox
        self.connection_file = f"{self.runtime}/kernel.json"
        self.client_factory = BoxedClient

    @default("context")
    def _shared_context(self):
        return _context(self.box.bounds.output + SIGNATURE_SLACK)    # its control socket's too; never destroyed

    async def _async_launch_kernel(self, kernel_cmd, **kw):
        argv = [sandbox.KERNEL_FILE if a == self.connection_file else a for a in kernel_cmd]
        cmd = self.box.wrap(sandbox.command(argv, self.folder, connection=self.connection_file, bounds=self.box.bounds,
                                            env=self.env))
        # bwrap gets an empty environment (its /proc/1/environ is the sandbox's to read); the kernel's chatter is
        # not the grader's log
        kw.update(env={}, cwd=self.runtime, preexec_fn=self.box.preexec(sandbox.CPU_S, sandbox.MEMORY),
                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        await super()._async_launch_kernel(cmd, **kw)
        self.box.started(self.provisioner.pid)
        inner = await asyncio.get_running_loop().run_in_executor(None, self.box.inner)
        if inner is None:
            raise RuntimeError(f"the sandbox did not start (bwrap made no process in 10 s): {_why_not(cmd)}")
        self.ip = f"/proc/{inner}/root{sandbox.KERNEL_DIR}/kernel"          # the same sockets, seen from here

    def client(self, **kwargs):
        return super().client(context=self.context, **kwargs)

    async def shutdown_kernel(self, now: bool = False, restart: bool = False) -> None:
        # nbclient shuts the kernel down before it stops the client's channels: the kernel closing its sockets as it
        # ends is no message over the bound (on a loaded machine it lived 0.3 s on and honest work was 'stopped')
        self.ending = True
        await super().shutdown_kernel(now=now, restart=restart)


def _why_not(cmd: list[str]) -> str:
    """What bwrap says when the same sandbox runs `true` (the kernel's own stderr is never read: it is the
    student's to fill)."""
    cut = len(cmd) - 1 - cmd[::-1].index("--") if "--" in cmd else len(cmd)
    try:
        r = subprocess.run([*cmd[:cut], "--", "true"], env={}, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"bwrap could not be run again to ask why ({exc})"
    said = " ".join(r.stderr.split())[-400:]
    return said or f"the same sandbox running `true` exits {r.returncode} and says nothing (the machine may be overloaded)"


class CappedChannel(AsyncZMQSocketChannel):
    """A channel whose every message is counted by the box before it is read; past the bound, none is read."""
    box: Box

    async def _recv(self, **kwargs):
        frames = await self.socket.recv_multipart(**kwargs)
        if not self.box.output(sum(len(f) for f in frames)):
            await asyncio.sleep(10)         # the box killed the kernel: nbclient sees it dead and cancels this
            raise Empty
        _, message = self.session.feed_identities(frames)
        return self.session.deserialize(message)


class BoxedClient(AsyncKernelClient):
    """The kernel's client: capped channels, and a monitor on each socket, which zmq drops for a message over the
    bound while the kernel lives."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        capped = type("CappedChannel", (CappedChannel,), {"box": self.parent.box})
        self.shell_channel_class = self.iopub_channel_class = self.stdin_channel_class = capped
        self.control_channel_class = capped
        self._watched: list[tuple] = []          # (socket, its monitor, the task reading it)

    def _create_connected_socket(self, channel, identity=None):
        socket = super()._create_connected_socket(channel, identity)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:            # no loop runs: nothing to watch with
            return socket
        monitor = socket.get_monitor_socket(zmq.EVENT_DISCONNECTED | zmq.EVENT_MONITOR_STOPPED)
        self._watched.append((socket, monitor, loop.create_task(self._watch(monitor))))
        return socket

    async def _watch(self, monitor) -> None:
        try:
            while True:
                event = parse_monitor_message(await monitor.recv_multipart())["event"]
                if event == zmq.EVENT_MONITOR_STOPPED:
                    return
                if event == zmq.EVENT_DISCONNECTED:
                    await asyncio.sleep(0.3)
                    if not self.parent.ending and await self.parent._async_is_alive():
                        self.parent.box.stop("output")
        except (asyncio.CancelledError, zmq.ZMQError):
            pass
        finally:
            monitor.close(linger=0)

    def stop_channels(self) -> None:
        # the monitors go first: each holds an inproc address named after its socket's file descriptor, which the
        # next submission's sockets may get (the context is shared)
        for socket, monitor, task in self._watched:
            task.cancel()
            if not socket.closed:
                socket.disable_monitor()
            monitor.close(linger=0)
        self._watched.clear()
        super().stop_channels()


def manager_class(box: Box, folder: str, runtime: str, env=None) -> type:
    """A SandboxedKernelManager for one submission: its box, its folder (copied in), a runtime folder (here), and
    what the student's kernel may know (`env`: their id and variant key)."""
    return type("SandboxedKernel", (SandboxedKernelManager,), {"box": box, "folder": folder, "runtime": runtime,
                                                               "env": dict(env or {})})
