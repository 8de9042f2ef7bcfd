"""Which PTX memory accesses ptxas fused into one machine instruction, read from the SASS.

The GPU runs SASS, and ptxas may turn neighbouring narrow accesses into one wider one (four
``ld.shared.f32`` at [%r], [%r+4], [%r+8], [%r+12] become one ``LDS.128``, four stores one
``STS.128``), load a repeated address once, or load only the bytes a kernel uses. Nsight Compute
counts the machine instruction, once, with the cost of its width, so counting the PTX's accesses
one by one gets requests, wavefronts and bank conflicts wrong. Fusion is not predicted here
(ptxas fuses some provably aligned neighbours and leaves others apart); it is read from what
ptxas did:

1. ``nvdisasm -gp`` names for each SASS instruction the PTX line it came from, so every SASS
   load or store *carries* one PTX access; a fused one carries the member nvdisasm named.
2. A carrier wider than its PTX access *leads* a group: the PTX accesses that no SASS
   instruction carries (with the same address operand, space and direction) and that fit with
   it into one window of the SASS width are its members. Stores must also share the leader's
   predicate and basic block; loads need not, because ptxas hoists a shared load out of a
   branch into the wide load (seen: `if (i < n) out[..] = v[i]` with v[0] loaded in the
   branch, fused into the LDS.128 of v[0..3]). When other SASS instructions on the same
   registers carry accesses one to one, their immediate offsets fix where the window lies;
   otherwise the window that holds the most of them is taken.
3. A PTX access no SASS instruction carries that repeats one that is carried (same address,
   width) was merged away by ptxas: it is counted with that one.
4. SASS instructions predicated ``@!PT`` never execute and are left out (ptxas puts a ``@!PT LDS
   RZ, [RZ]`` beside each cp.async's LDGSTS); LDGSTS, LDSM, STSM and the TMA's UTMALDG, UTMASTG,
   UBLKCP are no loads or stores here (``sass.access_of``): the simulator counts cp.async,
   ldmatrix and stmatrix one SASS instruction per PTX instruction, and the TMA apart.
5. A single carrier narrower than its access reads only the part the kernel uses (seen: the
   high word of a double for copysign, `LDG.E.CONSTANT [R2.64+0x4]` for an 8-byte load): it is
   counted at its width and at its offset inside the access.

The simulator then counts a group once, where the SASS instruction is (at the PTX access it
carries, the leader), with the SASS width at the leader's address rounded down to it (the
hardware's access is aligned to its width), and nothing at the other members
(``widths[pc] == 0``). Anything that cannot be matched (a SASS access whose PTX line is no load
or store of its kind, a PTX access the SASS splits or carries at mixed widths, one no SASS
instruction carries and no group takes) keeps the PTX's own count and becomes a
:class:`Problem`, reported in the run's warnings.

Reading SASS costs an nvdisasm run (about half a second, whatever the kernel's size), so a kernel
in which no two accesses could share a machine instruction (:func:`could_fuse`: no two loads or
stores of one space through one address operand less than 16 bytes apart, the widest access)
gets a plan that reads the SASS only when the source view asks for it: the matcher could only
confirm the PTX's counts, since it groups nothing else.

What it does not do: run nvdisasm (``course_lib.sass``) or count (``metrics``/``access``).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..compile.ptx import TYPES

COUNTED_SPACES = ("global", "shared", "generic")
WIDEST = 16     # bytes: LDS.128, LDG.E.128 — no machine load or store is wider
_SASS_SPACE = {"global": ("global",), "shared": ("shared",), "generic": ("generic", "global", "shared")}
_BLOCK_ENDS = ("bra", "ret", "exit", "bar", "barrier", "membar", "fence", "atom", "red", "call")


@dataclass
class Group:
    """One SASS access and the PTX accesses it carries (more than one when fused)."""
    sass: list                     # course_lib.sass.Instruction(s): the carrier, and duplicates
    members: list                  # PTX instruction indices, in program order
    width: int                     # bytes per thread of the machine access
    leader: int = -1               # the member the SASS instruction is attributed to
    shift: int = 0                 # where a narrowed access starts inside the leader's bytes

    @property
    def fused(self) -> bool:
        return len(self.members) > 1


@dataclass
class Problem:
    pc: int
    line: int
    message: str


@dataclass
class Plan:
    """How to count one kernel's accesses; built by :func:`plan`."""
    widths: dict = field(default_factory=dict)     # pc -> width to count with; 0: counted elsewhere
    shifts: dict = field(default_factory=dict)     # pc -> bytes to add to its address (narrowed)
    groups: list = field(default_factory=list)
    group_of: dict = field(default_factory=dict)   # pc -> Group
    problems: list = field(default_factory=list)
    sass: list = field(default_factory=list)       # every SASS instruction of the kernel
    pc_of_line: dict = field(default_factory=dict) # PTX text line -> instruction index
    note: str = ""                                 # why there is no SASS (then nothing else is set)
    made_by: str = ""                              # the compiler that made the SASS
    pending: object = None                         # () -> Plan: reads the SASS it skipped (could_fuse)

    @property
    def fused_groups(self):
        return [g for g in self.groups if g.fused]

    def full(self) -> "Plan":
        """The plan with its SASS read, for the source view (counting never needs it then)."""
        if self.pending is not None:
            read, self.pending = self.pending, None
            self.__dict__.update(read().__dict__)
        return self


def unavailable(reason: str) -> Plan:
    return Plan(note=reason)


@dataclass
class _Access:
    pc: int
    space: str
    op: str
    width: int
    base: str | None
    offset: int
    guard: tuple | None
    block: int
    volatile: bool = False


def ptx_accesses(kernel) -> dict[int, _Access]:
    """The PTX loads and stores the simulator counts, by instruction index."""
    out, block = {}, 0
    starts = set(kernel.labels.values())
    for ins in kernel.instructions:
        if ins.index in starts:
            block += 1
        if ins.opcode in ("ld", "ldu", "st") and ins.type in TYPES:
            space = next((m for m in ins.mods if m in ("global", "shared", "local", "param", "const")), "generic")
            if space in COUNTED_SPACES:
                is_load = ins.opcode != "st"
                addr = ins.operands[1] if is_load else ins.operands[0]
                vec = next((int(m[1:]) for m in ins.mods if m in ("v2", "v4", "v8")), 1)
                out[ins.index] = _Access(ins.index, space, "ld" if is_load else "st", TYPES[ins.type][0] * vec,
                                         addr.name, int(addr.value or 0), ins.guard, block, "volatile" in ins.mods)
        if ins.opcode in _BLOCK_ENDS:
            block += 1
    return out


def could_fuse(kernel) -> bool:
    """Could any two of the kernel's accesses ride in one machine instruction the matcher reads?
    (volatile ones cannot: ptxas makes each of them on its own)"""
    streams: dict = {}
    for a in ptx_accesses(kernel).values():
        if not a.volatile:
            streams.setdefault((a.space, a.op, a.base), []).append(a.offset)
    for offsets in streams.values():
        offsets.sort()
        if any(b - a < WIDEST for a, b in zip(offsets, offsets[1:])):
            return True
    return False


def plan(kernel, sass_instructions) -> Plan:
    """Match one kernel's SASS (``course_lib.sass.parse(...)[entry]``) to its PTX."""
    p = Plan(sass=list(sass_instructions))
    if p.sass and not any(s.ptx_line for s in p.sass):
        return unavailable("the CUBIN has no PTX line information (compiled without -lineinfo?)")
    at_line: dict[int, list] = {}
    for ins in kernel.instructions:
        if ins.ptx_line:
            p.pc_of_line.setdefault(ins.ptx_line, ins.index)
            at_line.setdefault(ins.ptx_line, []).append(ins.index)
    accesses = ptx_accesses(kernel)
    by_pc = {ins.index: ins for ins in kernel.instructions}
    carriers: dict[int, list] = {}
    for s in p.sass:
        a = s.access
        if a is None or a.space == "local" or s.text.startswith("@!PT"):
            continue            # @!PT never executes (ptxas puts a `@!PT LDS RZ, [RZ]` beside an LDGSTS)
        # a line may hold several instructions (inline asm): the first load or store of this kind
        pc = next((pc for pc in at_line.get(s.ptx_line, []) if pc in accesses and accesses[pc].op == a.op
                   and a.space in _SASS_SPACE[accesses[pc].space]), None)
        if pc is None:
            near = p.pc_of_line.get(s.ptx_line)
            what = f"PTX line {s.ptx_line}" + (f" (`{' '.join(by_pc[near].text.split())}`)" if near in by_pc else "")
            p.problems.append(Problem(-1, by_pc[near].line if near in by_pc else 0,
                                      f"the machine code has `{s.text}`, which {what} does not explain"))
            continue
        carriers.setdefault(pc, []).append(s)
    orphans = {pc for pc in accesses if pc not in carriers}
    offsets = _sass_offsets(carriers, accesses)
    leaders = []
    for pc, ss in sorted(carriers.items()):
        widths = {s.access.width for s in ss}
        a = accesses[pc]
        narrow = _narrowed(a, ss, offsets) if len(ss) == 1 and ss[0].access.width < a.width else None
        if widths == {a.width}:
            _add(p, Group(ss, [pc], a.width))
        elif len(widths) == 1 and widths.pop() > a.width:
            leaders.append((pc, ss))
        elif narrow is not None:
            _add(p, Group(ss, [pc], ss[0].access.width, shift=narrow))
        else:
            _problem(p, by_pc[pc], f"the PTX access is {a.width} bytes, the machine code has "
                     + ", ".join(f"`{s.text}`" for s in ss))
    for pc, ss in leaders:
        members, start = _members(accesses[pc], ss[0], orphans, accesses, offsets)
        # the window found fixes where later windows on the same registers lie
        offsets.setdefault((accesses[pc].base, ss[0].access.base), start - ss[0].access.offset)
        orphans -= set(members)
        _add(p, Group(ss, sorted(members), ss[0].access.width, leader=pc))
    for pc in sorted(orphans):
        home = _duplicate_of(accesses[pc], p, accesses)
        if home is not None:
            home.members.append(pc)
            home.members.sort()
            _add(p, home)
        else:
            _problem(p, by_pc[pc], "no machine instruction carries this access (ptxas removed it or "
                     "merged it in a way the simulator cannot read)")
    return p


def _add(p: Plan, g: Group):
    if g not in p.groups:
        p.groups.append(g)
    if g.leader < 0:
        g.leader = g.members[0]
    for pc in g.members:
        p.group_of[pc] = g
        p.widths[pc] = g.width if pc == g.leader else 0
    if g.shift:
        p.shifts[g.leader] = g.shift


def _problem(p: Plan, ins, why):
    p.problems.append(Problem(ins.index, ins.line, f"`{ins.text}` (PTX line {ins.ptx_line}): {why}"))


def _same_stream(a: _Access, b: _Access) -> bool:
    if (a.space, a.op, a.base) != (b.space, b.op, b.base):
        return False
    return a.op == "ld" or (a.guard, a.block) == (b.guard, b.block)


def _sass_offsets(carriers, accesses):
    """(PTX base, SASS registers) -> PTX offset minus SASS offset, from one-to-one carriers:
    where it is known, the fused window's place is too."""
    shift = {}
    for pc, ss in carriers.items():
        a = accesses[pc]
        for s in ss:
            if s.access.width == a.width:
                shift.setdefault((a.base, s.access.base), a.offset - s.access.offset)
    return shift


def _narrowed(a: _Access, ss, offsets) -> int | None:
    """Where the one narrower SASS access lies inside the PTX access (None: it does not fit).
    Its registers are taken to hold the PTX operand's address unless one-to-one carriers on
    the same registers say how far apart the two are."""
    s = ss[0].access
    shift = offsets.get((a.base, s.base), 0) + s.offset - a.offset
    return shift if 0 <= shift <= a.width - s.width and shift % s.width == 0 else None


def _members(lead: _Access, s, orphans, accesses, offsets) -> tuple[list[int], int]:
    """The orphans that ride in ``s`` (width W) with ``lead``, all inside one W-byte window, and
    where that window starts (as an offset from their common address operand)."""
    W = s.access.width
    near = [accesses[pc] for pc in orphans if _same_stream(accesses[pc], lead)
            and abs(accesses[pc].offset - lead.offset) < W]
    known = offsets.get((lead.base, s.access.base))
    if known is not None:
        starts = [known + s.access.offset]
    else:
        starts = range(lead.offset + lead.width - W, lead.offset + 1)
    best, best_bytes, best_start = [lead.pc], -1, lead.offset
    for start in starts:
        if not start <= lead.offset <= lead.offset + lead.width <= start + W:
            continue
        taken, used = [lead.pc], [(lead.offset, lead.offset + lead.width)]
        for a in sorted(near, key=lambda a: (a.block != lead.block, abs(a.offset - lead.offset), a.pc)):
            lo, hi = a.offset, a.offset + a.width
            if start <= lo and hi <= start + W and all(hi <= u0 or lo >= u1 for u0, u1 in used):
                taken.append(a.pc)
                used.append((lo, hi))
        got = sum(hi - lo for lo, hi in used)
        if got > best_bytes:
            best, best_bytes, best_start = taken, got, start
    return best, best_start


def _duplicate_of(a: _Access, p: Plan, accesses):
    """A carried group that already makes this very access (ptxas merged a repeat)."""
    for g in p.groups:
        lead = accesses[g.members[0]]
        if _same_stream(lead, a) and any(accesses[m].offset == a.offset and accesses[m].width == a.width
                                         for m in g.members):
            return g
    return None
