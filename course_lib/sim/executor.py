"""One simulated launch: its code, memories, counters and findings, run batch after batch.

:class:`Program` builds one closure per PTX instruction (``instructions``), places the
kernel's variables (``layout``), and runs the grid in batches of blocks (``plan``: up to 65,536
thread slots and 256 MiB at a time) that share one ``state.Workspace``. Each batch runs from its
first instruction until every thread has left (``scheduler.run_batch``); races found in it are
folded into one :class:`Race` per pair of instructions. An instruction budget and a
wall-clock limit per batch stop a kernel that does not end (``diagnose`` words it: a loop, a
recursion, or a long kernel); ``plan`` refuses, before it starts, a launch whose estimated time
is beyond ``max_work``, after its first batch one whose counted instructions project beyond it, and
after any batch one whose CPU time so far projects beyond it.

A run that stops (an error, Ctrl-C) drops all it holds (``Program.release``): the closures of the
traceback IPython keeps hold the Program and its batch, and with them the run's arrays.

``blocks=[(x, y, z), ...]`` runs only those blocks of the grid (the guarded GPU launch checks a
launch's corner blocks this way); the others are simply not run.

Limits: warps execute in lock-step, so timing-dependent bugs show up only as the races the
race detector reports, not as wrong values; calls other than printf/assert are unsupported.
"""
from __future__ import annotations

import sys
import time

import numpy as np

from ..compile import ptx as ptxmod
from ..errors import KernelError, keeps_everything
from . import heap, plan, registers
from .checks import diagnose
from .checks.owners import Owners
from .checks.races import Race, RaceDetector
from .isa import access, copy_ops
from .isa.instructions import build
from .results.metrics import Counters
from .results.result import SimRun
from .scheduler import run_batch
from .spaces import layout
from .spaces.memory import SHARED_START, GlobalMemory
from .gc_pause import gc_paused
from .state import Batch, ChosenBatch, Workspace

BATCH_THREADS = 1 << 16   # thread slots per batch, at most


class Program:
    """One simulated launch of one kernel: its code, memories, counters and findings."""

    def __init__(self, module, kernel, *, grid, block, params: bytes, param_offsets: dict,
                 globals_: GlobalMemory, dynamic_shared=0, source="", filename="kernel.cu",
                 check_races=True, max_steps=100_000, timeout=8.0, trace_block=0,
                 batch_threads=None, progress=None, echo=True, blocks=None, count_metrics=True,
                 max_work=plan.MAX_WORK, batch_bytes=plan.BATCH_BYTES, owners=False, scramble_shared=0):
        self.module, self.kernel = module, kernel
        self.grid, self.block = grid, block
        self.threads_per_block = int(np.prod(block))
        self.slots_per_block = -(-self.threads_per_block // 32) * 32
        self.params, self.param_offsets = params, param_offsets
        self.globals = globals_
        self.source_lines = source.splitlines()
        self.source, self.filename = source, filename
        self.check_races = check_races
        self.max_steps, self.timeout = max_steps, timeout
        self.trace_block = trace_block
        self.batch_threads = batch_threads or BATCH_THREADS
        self.batch_bytes, self.max_work = batch_bytes, max_work
        self.progress, self.echo = progress, echo
        self.dynamic_shared = dynamic_shared
        self.count_metrics = count_metrics   # off for the launch guard, which only wants faults
        self.fusion = None                   # fusion.Plan: how ptxas grouped the accesses
        self.scramble_shared = int(scramble_shared) & 0xFF      # a byte xor-ed into every shared load
        try:                                 # stopped while building: the closures made so far hold self
            self.owners = Owners(globals_) if owners else None     # which blocks touched which elements
            self.blocks = None if blocks is None else layout.chosen_blocks(blocks, grid)
            with gc_paused():
                self._build(module, kernel, dynamic_shared, globals_)
        except BaseException:
            self.release()
            raise

    def _build(self, module, kernel, dynamic_shared, globals_):
        """Place the kernel's variables, make the counters and one closure per instruction."""
        placed = layout.place_variables(module, kernel, dynamic_shared, globals_)
        self.symbols, self.shared_vars = placed.symbols, placed.shared_vars
        self.shared_bytes, self.local_bytes = placed.shared_bytes, placed.local_bytes
        self.counters = Counters(len(kernel.instructions))
        self.exec_counts = np.zeros(len(kernel.instructions) + 1, np.int64)
        self.accesses = []
        self.findings: dict = {}   # key -> Finding, or Race for keys ('race', ...)
        self.output: list[str] = []
        self.printed_lines = 0
        self.printf_dropped = 0
        self.batch_start = self.deadline = 0.0
        self.register_storage = kernel.analyses.get("register storage")
        if self.register_storage is None:
            self.register_storage = kernel.analyses["register storage"] = registers.plan_storage(kernel)
        self.code = [build(ins, self) for ins in kernel.instructions]

    def symbol_address(self, name):
        if name in self.symbols:
            return self.symbols[name]
        raise KernelError(f"the kernel refers to '{name}', which the simulator cannot place in memory")

    def read_param(self, name, off, width):
        """`width` bytes of the kernel parameter `name` at byte `off` (zero for an unknown name)."""
        dtype = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[width]
        if name not in self.param_offsets:
            return np.zeros((), dtype)[()]
        start = self.param_offsets[name] + off
        return np.frombuffer(self.params[start:start + width].ljust(width, b"\0"), dtype)[0]

    def race_granule(self):
        """The smallest shared access width in the kernel, at most 4 bytes: the race detector's unit."""
        widths = [ptxmod.TYPES[i.type][0] for i in self.kernel.instructions
                  if i.opcode in ("ld", "st", "atom", "red") and i.type in ptxmod.TYPES
                  and access.space_of(i) in ("shared", "generic")]
        return min([w for w in widths if w] + [4])

    def new_race_detector(self, nblocks, tp):
        if not self.check_races or self.shared_bytes == 0:
            return None
        return RaceDetector(nblocks, self.shared_bytes, self.race_granule(), tp)

    # ------------------------------------------------------------------ naming threads and lines
    def source_line(self, line):
        if line and 0 < line <= len(self.source_lines):
            return self.source_lines[line - 1]
        return None

    def thread_of(self, b, slot):
        t = int(b.tlin[slot])
        bx, by, _ = self.block
        return (t % bx, (t // bx) % by, t // (bx * by))

    def block_of(self, b, slot):
        return self.block_coords(self.linear_block(b, int(b.block_of[slot])))

    @staticmethod
    def linear_block(b, blk):
        """Linear grid index of block `blk` of batch `b`."""
        return int(b.ids[blk]) if b.ids is not None else b.first + blk

    def block_coords(self, lin):
        gx, gy, _ = self.grid
        return (lin % gx, (lin // gx) % gy, lin // (gx * gy))

    # ------------------------------------------------------------------ recording
    def note_uninitialized(self, b, slots, ins, addrs):
        diagnose.note_uninitialized(self, b, slots, ins, addrs)

    def trace(self, b, ins, space, width, a2, act2, is_load):
        blk = b.trace_at
        if blk < 0 or sum(1 for r in self.accesses if r["pc"] == ins.index) >= 8:
            return
        w0, w1 = blk * self.slots_per_block // 32, (blk + 1) * self.slots_per_block // 32
        addr = np.where(act2[w0:w1], a2[w0:w1], -1)
        self.accesses.append(dict(pc=ins.index, line=ins.line, space=space, width=width,
                                  op="ld" if is_load else "st", addresses=addr))

    def emit(self, text):
        self.output.append(text)
        self.printed_lines += 1
        if self.echo:
            sys.stdout.write(text)

    def read_c_string(self, address, limit=4096):
        located = self.globals.locate(np.array([address], np.uint64), 1)
        if not isinstance(located, tuple):
            return "<bad string pointer>"
        which, off = located
        data = self.globals.buffers[int(np.ravel(which)[0])].data
        start = int(off[0])
        end = start
        while end < min(len(data), start + limit) and data[end] != 0:
            end += 1
        return bytes(data[start:end]).decode("utf-8", "replace")

    def located(self, err, b, pc, mask):
        """Complete an instruction's error with what only the scheduler knows: the file, the source
        line, and the first thread that ran the instruction."""
        ins = self.kernel.instructions[pc]
        err.line = err.line or ins.line or None
        err.filename = err.filename or self.filename
        err.source_line = err.source_line or self.source_line(err.line)
        if err.thread is None and err.block is None:
            live = np.flatnonzero(b.alive if mask is None else mask)
            if live.size:
                err.thread, err.block = self.thread_of(b, int(live[0])), self.block_of(b, int(live[0]))
        err.args = (err._render(),)
        return err

    # ------------------------------------------------------------------ running
    def run(self) -> SimRun:
        heap.steady()
        try:
            with gc_paused():
                return self._run()
        except BaseException:
            self.release()
            raise

    def release(self):
        """Drop everything this launch holds, when its run stops (an error, Ctrl-C). The traceback IPython
        keeps holds the function of every frame it passed through (Python 3.11's ``frame.clear()``, in
        ``errors.release_frames``, clears only their variables): an instruction's closure holds the
        Program, a comprehension's inside one the batch, so whichever the run stopped in kept its
        matrices, registers and shared memory alive (593 MiB after Ctrl-C in an 8192 x 8192 transpose).
        A run that finished keeps its results in its SimRun. ``COURSE_LIB_TRACEBACK=1`` keeps everything."""
        if keeps_everything():
            return
        for part in (self.__dict__.get("batch"), self.__dict__.get("workspace"), self):
            if part is not None:
                part.__dict__.clear()

    def _run(self) -> SimRun:
        t0 = time.perf_counter()
        per_batch = plan.blocks_per_batch(self)
        total, batches = plan.batches(self, per_batch)
        plan.check_estimate(self, total, per_batch)
        done, started = 0, time.thread_time()
        try:
            with np.errstate(all="ignore"):
                workspace = self.workspace = Workspace(self, min(per_batch, total))
                for n, spec in enumerate(batches, 1):
                    b = self._run_one(workspace, spec)
                    if done == 0:
                        plan.check_projection(self, b, total)
                    done += b.nblocks
                    plan.check_pace(self, done, total, time.thread_time() - started, n)
                    if self.progress:
                        self.progress(done, total)
        except MemoryError:
            raise plan.out_of_memory(self, min(per_batch, total)) from None
        finally:
            if hasattr(self.progress, "close"):
                self.progress.close()
        if self.printf_dropped and self.echo:
            sys.stdout.write(f"... {self.printf_dropped} more printf line(s) not shown\n")
        return SimRun(self, time.perf_counter() - t0)

    def _run_one(self, workspace, spec):
        b = self.batch = Batch(workspace, *spec) if self.blocks is None else ChosenBatch(workspace, spec)
        b.trace_at = self._trace_position(b)
        # the clock starts at the batch's first instruction: compiling, building the closures and
        # allocating the batch are not the kernel's running time. It is this thread's CPU time, so
        # that other processes on a busy machine (a class hub, CI) never make a kernel "too slow"
        self.batch_start = time.thread_time()
        self.deadline = self.batch_start + self.timeout
        run_batch(self, b)
        copy_ops.unfinished(self, b)
        if b.races is not None:
            self._collect_races(b)
        return b

    def _trace_position(self, b):
        if b.ids is None:
            blk = self.trace_block - b.first
            return blk if 0 <= blk < b.nblocks else -1
        hit = np.flatnonzero(b.ids == self.trace_block)
        return int(hit[0]) if hit.size else -1

    def _collect_races(self, b):
        """Fold this batch's racing instruction pairs into the launch's findings: one Race per pair,
        its count summed over batches, its example the first batch's."""
        for (kind, pc_a, pc_b, scope), (count, slot_a, slot_b, entry) in b.races.records.items():
            key = ("race", kind, pc_a, pc_b, scope)
            if key in self.findings:
                self.findings[key].count += count         # a race seen again in a later batch of blocks
                continue
            ia, ib = self.kernel.instructions[pc_a], self.kernel.instructions[pc_b]
            addr = SHARED_START + (entry % b.races.per_block) * b.races.granule
            var = next((n for n, (o, s) in self.shared_vars.items() if o <= addr < o + s), "")
            self.findings[key] = Race(kind=kind, lines=(ia.line, ib.line), pcs=(pc_a, pc_b), scope=scope,
                                      count=count, threads=(self.thread_of(b, slot_a), self.thread_of(b, slot_b)),
                                      block=self.block_of(b, slot_b), address=addr, variable=var)
