"""The lexical level of PTX: statements, labels and braces out of the text, and operands.

``statements(text)`` yields ``(kind, payload, line)`` in source order — ``loc`` (a .loc
directive), ``open``/``close`` (braces), ``label``, ``header`` (an .entry or .func up to its
body's brace), ``stmt`` (one statement without its ';') — with the 1-based line of the text it
starts on; comments count as the newlines they span, so line numbers stay those of the text.
``parse_operands`` reads an instruction's operands into :class:`Operand` values.
"""
from __future__ import annotations

import re
import struct
from dataclasses import dataclass

_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_LABEL = re.compile(r"^([$%\w.]+):(?!:)")


@dataclass(frozen=True)
class Operand:
    kind: str                 # reg | imm | special | addr | vec | symbol | label | sink
    name: str | None = None   # register, special register, symbol or label name
    value: object = None      # immediate (int/float/raw text) or address offset
    items: tuple = ()         # vector elements
    negated: bool = False     # '!%p' predicate operands


def statements(text):
    """(kind, payload, line) for each item of the PTX text (see the module's docstring)."""
    return _statements(_COMMENT.sub(_blank_comment, text))


def _blank_comment(m):
    """A comment becomes the newlines it spanned, so PTX line numbers stay those of the text."""
    return "\n" * m.group().count("\n")


def _statements(text):
    """Yield (kind, payload, line): loc, open, close, label, header, stmt — in source order,
    with the 1-based line of the text where the item starts."""
    pending = ""
    start = 0
    lines = iter(enumerate(text.splitlines(), 1))
    for number, raw in lines:
        s = raw.strip()
        if not s:
            continue
        if not pending and re.match(r"\.(loc|file)\s", s):   # not .local: line directives only
            if s.startswith(".loc"):
                yield "loc", s, number
            continue
        if not pending and s.startswith((".version", ".target", ".address_size")):
            yield "stmt", s.rstrip(";"), number   # these directives end at the line, not at a ';'
            continue
        if not pending and s.startswith(".section"):
            _skip_section(s, lines)
            continue
        while s:
            if not pending:
                if s[0] in "{}":
                    yield ("open" if s[0] == "{" else "close"), None, number
                    s = s[1:].strip()
                    continue
                m = _LABEL.match(s)
                if m:
                    yield "label", m[1], number
                    s = s[m.end():].strip()
                    continue
            start = start if pending else number
            end, header = _statement_end(pending + " " + s if pending else s)
            full = pending + " " + s if pending else s
            if end is None:
                pending = full
                break
            stmt, s = full[:end].strip(), full[end + 1:].strip()
            pending = ""
            if header:
                yield "header", stmt, start
                yield "open", None, start
            else:
                yield "stmt", stmt.rstrip(";").strip(), start


def _statement_end(s):
    """Index of the ';' ending a statement, or of the '{' opening a function body."""
    braces = parens = 0
    is_func = re.match(r"(?:\.(?:visible|weak|extern)\s+)*\.(?:entry|func)\b", s) is not None
    for i, ch in enumerate(s):
        if ch == "(":
            parens += 1
        elif ch == ")":
            parens -= 1
        elif ch == "{":
            if is_func and parens == 0 and braces == 0:
                return i, True
            braces += 1
        elif ch == "}":
            braces -= 1
        elif ch == ";" and braces == 0 and parens == 0:
            return i, False
    return None, False


def _skip_section(first, lines):
    depth = first.count("{") - first.count("}")
    for _, raw in lines:
        depth += raw.count("{") - raw.count("}")
        if depth <= 0 and "}" in raw:
            return


def plain_reg(op, plain):
    """An inline-asm register named without '%' (parsed as a symbol) -> the stored '%name'."""
    if op.kind == "vec":
        return Operand("vec", op.name, op.value, tuple(plain_reg(x, plain) for x in op.items), op.negated)
    if op.kind in ("symbol", "addr") and op.name in plain:
        return Operand("reg" if op.kind == "symbol" else "addr", "%" + op.name, op.value, op.items, op.negated)
    if op.kind == "symbol" and op.name.startswith("!") and op.name[1:] in plain:
        return Operand("reg", "%" + op.name[1:], op.value, op.items, True)
    return op


def _split_top(text, sep=","):
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "{[(":
            depth += 1
        elif ch in "}])":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def parse_operands(text):
    if text.startswith("("):  # call.uni (retval), func, (params)
        return [Operand("raw", value=text)]
    return [_operand(p) for p in _split_top(text)]


def _operand(p) -> Operand:
    p = p.strip()
    if p.startswith("{"):
        return Operand("vec", items=tuple(_operand(x) for x in _split_top(p[1:-1])))
    if p.startswith("["):
        inner = p[1:-1].replace(" ", "")
        m = re.match(r"^([%\w$.]+)?(?:\+?(-?(?:0x[0-9a-fA-F]+|\d+)))?$", inner)
        if not m:
            return Operand("addr", name=inner, value=0)
        base, off = m.groups()
        if base and re.fullmatch(r"-?(0x[0-9a-fA-F]+|\d+)", base):
            return Operand("addr", name=None, value=int_literal(base))
        return Operand("addr", name=base, value=int_literal(off) if off else 0)
    if p == "_":
        return Operand("sink")
    if p.startswith("!%"):
        return Operand("reg", name=p[1:], negated=True)
    if "|" in p:
        a, b = p.split("|")
        return Operand("vec", items=(_operand(a), _operand(b)), value="pair")
    if p.startswith("%"):
        base = p.split(".")[0]
        special = base in _SPECIALS or base.startswith(("%envreg", "%lanemask"))
        return Operand("special" if special else "reg", name=p)
    if re.fullmatch(r"0[fF][0-9a-fA-F]{8}", p):
        return Operand("imm", value=struct.unpack("<f", int(p[2:], 16).to_bytes(4, "little"))[0])
    if re.fullmatch(r"0[dD][0-9a-fA-F]{16}", p):
        return Operand("imm", value=struct.unpack("<d", int(p[2:], 16).to_bytes(8, "little"))[0])
    if re.fullmatch(r"-?(0[xX][0-9a-fA-F]+|0[bB][01]+|0[0-7]*|[1-9]\d*)[uU]?", p):
        return Operand("imm", value=int_literal(p))
    if re.fullmatch(r"-?\d+\.\d*(e[-+]?\d+)?", p):
        return Operand("imm", value=float(p))
    if p.startswith("$L") or p.startswith("L__"):
        return Operand("label", name=p)
    return Operand("symbol", name=p)


def int_literal(s: str) -> int:
    s = s.rstrip("uU")
    neg = s.startswith("-")
    s = s.lstrip("-")
    if s[:2].lower() == "0x":
        v = int(s, 16)
    elif s[:2].lower() == "0b":
        v = int(s, 2)
    elif len(s) > 1 and s[0] == "0":
        v = int(s, 8)
    else:
        v = int(s)
    return -v if neg else v


_SPECIALS = {"%tid", "%ntid", "%ctaid", "%nctaid", "%laneid", "%warpid", "%nwarpid", "%smid",
             "%nsmid", "%gridid", "%clock", "%clock64", "%globaltimer", "%globaltimer_lo",
             "%globaltimer_hi", "%dynamic_smem_size", "%total_smem_size", "%clock_hi",
             "%cluster_ctarank", "%cluster_nctarank", "%is_explicit_cluster"}
