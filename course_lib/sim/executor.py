"""The SIMT scheduler: run a kernel's PTX over a whole grid with numpy.

Mechanism. Blocks are run in batches (``plan``: up to 65,536 threads and 256 MiB at a time).
Within a batch every thread has a program counter. While all live threads share one PC the
batch is *converged* and each instruction is one numpy operation over all of them. A branch
that splits them switches to per-thread PCs: the scheduler then always runs the lowest PC
among runnable threads, for exactly the threads at that PC, which re-converges structured
code at the join point (the threads that went ahead wait there until the others catch up),
and the batch becomes converged again once every live thread is at one PC.

``bar.sync`` parks threads until no thread of the batch can run; then every block whose
waiting threads are all at the same barrier is released (threads that have exited do not
count, as on Volta and later). Threads of one block waiting at *different* barriers, or a
barrier released while threads of its block have already left the kernel, raise
:class:`BarrierError` — on a GPU that hangs or silently mis-synchronises. An instruction
budget and a wall-clock limit per batch stop a kernel that does not end (``diagnose`` says
whether a loop is still running); ``plan`` refuses a launch too large to finish in
reasonable time, before it starts. Races found in each batch are folded into one
:class:`Race` per pair of instructions.

``blocks=[(x, y, z), ...]`` runs only those blocks of the grid (the guarded GPU launch
checks a launch's corner blocks this way); the others are simply not run.

Limits: warps execute in lock-step, so timing-dependent bugs show up only as the races the
race detector reports, not as wrong values; calls other than printf/assert are unsupported.
"""
from __future__ import annotations

import gc
import sys
import time

import numpy as np

from ..compile import ptx as ptxmod
from ..errors import ArgumentError, KernelError, LaunchError
from . import diagnose, plan
from .instructions import build
from .memory import SHARED_START, GlobalMemory
from .metrics import Counters
from .races import Race, RaceDetector
from .result import Finding, SimRun
from .state import Batch

BIG = np.iinfo(np.int64).max
BATCH_THREADS = 1 << 16   # measured: small batches stay in cache and reuse memory


class Program:
    """One simulated launch of one kernel: its code, memories, counters and findings."""

    def __init__(self, module, kernel, *, grid, block, params: bytes, param_offsets: dict,
                 globals_: GlobalMemory, dynamic_shared=0, source="", filename="kernel.cu",
                 check_races=True, max_steps=100_000, timeout=8.0, trace_block=0,
                 batch_threads=None, progress=None, echo=True, blocks=None, count_metrics=True,
                 max_work=plan.MAX_WORK, batch_bytes=plan.BATCH_BYTES):
        self.module, self.kernel = module, kernel
        self.grid, self.block = grid, block
        self.threads_per_block = int(np.prod(block))
        self.slots_per_block = -(-self.threads_per_block // 32) * 32
        self.params, self.param_offsets = params, param_offsets
        self.globals = globals_
        self.source_lines = source.splitlines()
        self.filename = filename
        self.check_races = check_races
        self.max_steps, self.timeout = max_steps, timeout
        self.trace_block = trace_block
        self.batch_threads = batch_threads or BATCH_THREADS
        self.batch_bytes, self.max_work = batch_bytes, max_work
        self.progress = progress
        self.echo = echo
        self.dynamic_shared = dynamic_shared
        self.count_metrics = count_metrics   # off for the launch guard, which only wants faults
        self.blocks = None if blocks is None else self._block_ids(blocks)
        self._layout_memory()
        self.counters = Counters(len(kernel.instructions))
        self.exec_counts = np.zeros(len(kernel.instructions) + 1, np.int64)
        self.accesses = []
        self.findings: dict = {}   # key -> Finding, or Race for keys ('race', ...)
        self.output: list[str] = []
        self.printed_lines = 0
        self.printf_dropped = 0
        self.code = [build(ins, self) for ins in kernel.instructions]

    # ------------------------------------------------------------------ layout
    def _layout_memory(self):
        offset = SHARED_START
        self.shared_vars = {}
        self.symbols = {}
        shared = [v for v in list(self.module.variables.values()) + list(self.kernel.variables.values())
                  if v.space == "shared"]
        for v in (v for v in shared if v.size > 0):
            offset = -(-offset // v.align) * v.align
            self.symbols[v.name] = offset
            self.shared_vars[demangle_local(v.name)] = (offset, v.size)
            offset += v.size
        for v in (v for v in shared if v.size == 0):  # extern __shared__: the dynamic part
            offset = -(-offset // max(v.align, 16)) * max(v.align, 16)
            self.symbols[v.name] = offset
            self.shared_vars[demangle_local(v.name)] = (offset, self.dynamic_shared)
        offset += self.dynamic_shared
        self.shared_bytes = offset - SHARED_START
        self.local_bytes = 0
        for v in self.kernel.variables.values():
            if v.space == "local":
                self.symbols[v.name] = self.local_bytes
                self.local_bytes += v.size
        for v in self.module.variables.values():
            if v.space in ("global", "const"):
                data = np.frombuffer(bytearray(v.init or bytes(v.size)), np.uint8)
                self.symbols[v.name] = self.globals.add(v.name, data, label=f"__{'device' if v.space == 'global' else 'constant'}__ variable '{v.name}'",
                                                        writable=v.space == "global")

    def _block_ids(self, blocks):
        example = "blocks=[(0, 0), (gx - 1, gy - 1)]"
        if isinstance(blocks, (str, bytes)) or not hasattr(blocks, "__iter__"):
            raise ArgumentError(f"blocks={blocks!r}: give a list of block coordinates", hint=f"e.g. {example}")
        gx, gy, gz = self.grid
        ids = set()
        for blk in blocks:
            c = tuple(blk) if isinstance(blk, (tuple, list, np.ndarray)) else (blk,)
            if not 1 <= len(c) <= 3 or not all(_index(v) for v in c):
                raise ArgumentError(f"blocks=: {blk!r} is not a block's coordinates (1 to 3 ints)", hint=f"e.g. {example}")
            c = tuple(int(v) for v in c) + (0,) * (3 - len(c))
            if not all(0 <= v < g for v, g in zip(c, self.grid)):
                raise LaunchError(f"blocks=: block {blk!r} is outside the grid {self.grid}",
                                  hint="block coordinates run from 0 to grid-1 on each axis")
            ids.add(c[0] + c[1] * gx + c[2] * gx * gy)
        if not ids:
            raise ArgumentError("blocks=[] names no block, so nothing would run", hint=f"e.g. {example}, or leave "
                                "blocks= out to run the whole grid")
        return sorted(ids)

    def symbol_address(self, name):
        if name in self.symbols:
            return self.symbols[name]
        raise KernelError(f"the kernel refers to '{name}', which the simulator cannot place in memory")

    def read_param(self, b, name, off, width, mask):
        if name in self.param_offsets:
            start = self.param_offsets[name] + off
            raw = self.params[start:start + width].ljust(width, b"\0")
            return np.frombuffer(raw, {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[width])[0]
        return np.zeros((), {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[width])[()]

    def race_granule(self):
        """The smallest shared access width in the kernel: the race detector's unit of shadow."""
        widths = [ptxmod.TYPES[i.type][0] for i in self.kernel.instructions
                  if i.opcode in ("ld", "st", "atom", "red") and i.type in ptxmod.TYPES and
                  ("shared" in i.mods or not any(m in i.mods for m in ("global", "local", "param", "const")))]
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
        return self.block_coords(self._linear(b, int(b.block_of[slot])))

    @staticmethod
    def _linear(b, blk):
        """Linear grid index of block `blk` of batch `b`."""
        ids = getattr(b, "ids", None)
        return int(ids[blk]) if ids is not None else b.first + blk

    def block_coords(self, lin):
        gx, gy, _ = self.grid
        return (lin % gx, (lin // gx) % gy, lin // (gx * gy))

    # ------------------------------------------------------------------ recording
    def note(self, kind, ins, b, slot, message, count=1):
        key = (kind, ins.index)
        f = self.findings.get(key)
        if f is None:
            self.findings[key] = Finding(kind, ins.line, message, count, self.thread_of(b, slot), self.block_of(b, slot))
        else:
            f.count += count

    def note_uninitialized(self, b, slots, ins, addrs):
        diagnose.note_uninitialized(self, b, slots, ins, addrs)

    def trace(self, b, ins, space, width, a2, act2, is_load):
        blk = b.trace_at
        if blk < 0:
            return
        if sum(1 for r in self.accesses if r["pc"] == ins.index) >= 8:
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

    # ------------------------------------------------------------------ running
    def run(self) -> SimRun:
        # The simulator builds many short-lived closures and arrays; Python's cyclic GC walking them
        # made a small launch 5x slower. Nothing here creates cycles that must be freed mid-run.
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            return self._run()
        finally:
            if was_enabled:
                gc.enable()

    def _run(self) -> SimRun:
        t0 = time.perf_counter()
        per_batch = plan.blocks_per_batch(self)
        total, batches = plan.batches(self, per_batch)
        plan.check_estimate(self, total)
        done = 0
        try:
            with np.errstate(all="ignore"):
                for spec in batches:
                    b = Batch(self, *spec) if self.blocks is None else _Chosen(self, spec)
                    b.trace_at = self._trace_position(b)
                    # the clock starts at the batch's first instruction: compiling, building the
                    # closures and allocating the batch are not the kernel's running time
                    self._batch_start = time.perf_counter()
                    self._deadline = self._batch_start + self.timeout
                    self._run_batch(b)
                    if b.races is not None:
                        self._collect_races(b)
                    if done == 0:
                        plan.check_projection(self, b, total)
                    done += b.nblocks
                    b = None             # free this batch before the next one is allocated
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

    def _trace_position(self, b):
        ids = getattr(b, "ids", None)
        if ids is None:
            blk = self.trace_block - b.first
            return blk if 0 <= blk < b.nblocks else -1
        hit = np.flatnonzero(ids == self.trace_block)
        return int(hit[0]) if hit.size else -1

    def _run_batch(self, b):
        code, n_code = self.code, len(self.code)
        pc, pcs, waiting = 0, None, None
        while True:
            if pcs is None:
                if b.all_alive:
                    mask = None
                elif not b.alive.any():
                    return
                else:
                    mask = b.alive.copy()
                cur = pc
            else:
                runnable = b.alive & ~waiting
                if not runnable.any():
                    if not (waiting & b.alive).any():
                        return
                    self._release(b, pcs, waiting)
                    continue
                cur = int(pcs[runnable].min())
                mask = runnable & (pcs == cur)
                if not waiting.any() and mask.sum() == runnable.sum():
                    pcs, pc = None, cur          # re-converged
                    mask = None if b.all_alive else b.alive.copy()
            if cur >= n_code:                    # fell off the end: same as ret
                res = ("exit", mask)
            else:
                b.steps += 1
                self.exec_counts[cur] += 1
                if b.steps > self.max_steps or (b.steps & 7) == 0 and time.perf_counter() > self._deadline:
                    self._limit(b, cur, mask)
                try:
                    res = code[cur](b, mask)
                except KernelError as err:
                    raise self._located(err, b, cur, mask) from None
            if res is None:
                if pcs is None:
                    pc = cur + 1
                else:
                    pcs[mask] = cur + 1
                continue
            kind, sub = res[0], res[1]
            if kind == "bra":
                target = res[2]
                if sub is None:
                    if pcs is None:
                        pc = target
                    else:
                        pcs[mask] = target
                    continue
                n_taken = int(sub.sum())
                n_active = b.n if mask is None else int(mask.sum())
                if pcs is None and n_taken in (0, n_active):
                    pc = target if n_taken else cur + 1
                    continue
                if pcs is None:
                    pcs, waiting = self._diverge(b, cur)
                pcs[b.alive if mask is None else mask] = cur + 1
                pcs[sub] = target
            elif kind == "exit":
                exiting = b.alive.copy() if sub is None else sub
                if b.exit_pc is None:
                    b.exit_pc = np.full(b.n, -1, np.int64)
                b.exit_pc[exiting] = min(cur, n_code - 1)
                b.alive[exiting] = False
                b.all_alive = False
                if pcs is None:
                    pc = cur + 1         # the survivors were all here: still converged
                else:
                    pcs[mask] = cur + 1
                    pcs[exiting] = BIG
            elif kind == "bar":
                arriving = b.alive.copy() if sub is None else sub
                if pcs is None and (sub is None or int(sub.sum()) == int(b.alive.sum())):
                    if b.exit_pc is not None:
                        self._check_skipped(b, cur, np.flatnonzero((b.alive if sub is None else sub)
                                                                   .reshape(b.nblocks, b.tp).any(axis=1)))
                    if b.races is not None:
                        b.races.barrier_all()
                    pc = cur + 1
                    continue
                if pcs is None:
                    pcs, waiting = self._diverge(b, cur)
                pcs[b.alive if mask is None else mask] = cur + 1
                pcs[arriving] = cur
                waiting[arriving] = True

    def _diverge(self, b, cur):
        pcs = np.full(b.n, BIG, np.int64)
        pcs[b.alive] = cur
        return pcs, np.zeros(b.n, np.bool_)

    def _release(self, b, pcs, waiting):
        w = (waiting & b.alive).reshape(b.nblocks, b.tp)
        p = pcs.reshape(b.nblocks, b.tp)
        lo = np.where(w, p, BIG).min(axis=1)
        hi = np.where(w, p, -1).max(axis=1)
        has = w.any(axis=1)
        bad = np.flatnonzero(has & (lo != hi))
        if bad.size:
            self._divergent_barrier(b, int(bad[0]), p, w)
        blocks = np.flatnonzero(has)
        if b.exit_pc is not None:
            self._check_skipped(b, None, blocks, p, w)
        flat = w.reshape(-1)
        pcs[flat] += 1
        waiting[flat] = False
        if b.races is not None:
            b.races.barrier(blocks)

    def _divergent_barrier(self, b, blk, p, w):
        raise diagnose.divergent_barrier(self, b, blk, p, w)

    def _check_skipped(self, b, cur, blocks, p=None, w=None):
        """A barrier is released for `blocks`: every thread of each must have reached it. A thread
        that already left the kernel (an early `return`, or a barrier inside an `if` it skipped)
        breaks the Programming Guide's rule that all threads of a block reach each __syncthreads()."""
        gone = b.exit_pc.reshape(b.nblocks, b.tp)[blocks] >= 0
        if not gone.any():
            return
        i = int(np.flatnonzero(gone.any(axis=1))[0])
        blk = int(blocks[i])
        if cur is None:                        # released after divergence: where do they wait?
            cur = int(p[blk][w[blk]].min())
        raise diagnose.skipped_barrier(self, b, cur, blk, np.flatnonzero(gone[i]))

    def _located(self, err, b, cur, mask):
        """Complete an instruction's error with what only the scheduler knows: the file, the source
        line, and the first thread that ran the instruction."""
        ins = self.kernel.instructions[cur]
        err.line = err.line or ins.line or None
        err.filename = err.filename or self.filename
        err.source_line = err.source_line or self.source_line(err.line)
        if err.thread is None and err.block is None:
            live = np.flatnonzero(b.alive if mask is None else mask)
            if live.size:
                err.thread, err.block = self.thread_of(b, int(live[0])), self.block_of(b, int(live[0]))
        err.args = (err._render(),)
        return err

    def _limit(self, b, cur, mask):
        raise diagnose.limit_error(self, b, cur, mask, time.perf_counter() - self._batch_start)

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


class _Chosen(Batch):
    """A batch of chosen blocks (``blocks=``), not necessarily neighbours in the grid."""

    def __init__(self, launch, ids):
        self.ids = np.asarray(ids, np.int64)
        super().__init__(launch, int(self.ids[0]), len(self.ids))

    def _compute_special(self, name):
        if not name.startswith("%ctaid"):
            return super()._compute_special(name)
        gx, gy, _ = self.launch.grid
        axis = "xyz".index(name.partition(".")[2] or "x")
        one = (self.ids % gx, (self.ids // gx) % gy, self.ids // (gx * gy))[axis].astype(np.uint32)
        return np.repeat(one, self.tp)


def _index(v) -> bool:
    """An int or numpy integer (not a bool, not a float that int() would truncate)."""
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def demangle_local(name: str) -> str:
    """'_ZZ6tile_tILi32EEvPfE4tile' -> 'tile' (the name a student wrote for a __shared__ array)."""
    import re
    m = re.search(r"E(\d+)([A-Za-z_]\w*)$", name)
    if name.startswith("_ZZ") and m and len(m[2]) >= int(m[1]):
        return m[2][:int(m[1])]
    return name
