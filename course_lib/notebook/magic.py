"""The ``%%cuda`` cell magic: compile a notebook cell with NVRTC and bind its kernels to names.

    %load_ext course_lib          # or: import course_lib as cl; cl.setup()

    %%cuda -DTILE=32
    __global__ void scale(float* a, int n) { ... }

After the cell runs, ``scale`` is a :class:`course_lib.Function`: ``scale.simulate(grid, block,
args)`` runs it in the CPU simulator, ``scale(grid, block, args)`` on a GPU. Options:

=====================================  =====================================================
``-DNAME=VALUE`` or ``-D NAME=VALUE``  a preprocessor definition (repeatable)
``--instantiate EXPR`` / ``-i EXPR``   compile a template instance, e.g. ``"tile<float, 32>"``;
                                       ``-i t32=tile<float,32>`` binds it as ``t32``
``--name MOD``                         also bind the :class:`course_lib.RawModule` as ``MOD``
``--quiet`` / ``-q``                   print nothing when it compiles
``--std=c++17`` (or other ``-``flags)  passed to NVRTC as they are
=====================================  =====================================================

A template kernel nobody instantiated is bound as a :class:`~course_lib.kernel.module.Template`: index it with types and
numbers to get a Function (``tile[np.float32, 32]`` compiles ``tile<float, 32>``).

The cell is compiled as ``<first kernel>.cu`` (or ``<MOD>.cu`` with ``--name MOD``) with the
``%%cuda`` line kept as a comment, so line numbers in compile errors and simulator reports are
the cell's own line numbers (line 1 is the ``%%cuda`` line). The name does not depend on the
execution count, so stored outputs are the same however the notebook is run (nbval).
Re-running an unchanged cell reuses the compiled module (no recompilation).
Compile errors appear as a short message with a caret, not a traceback (every
:class:`course_lib.KernelError` renders that way in IPython). A cell that did not compile leaves its
names bound to the previous cell's kernels; ``kernel.cells`` records it, so that a check of one of
those names says so instead of judging the older kernel.

This module does not compile (``nvrtc``) or run kernels (``module``); it only parses the magic
line, builds the module and binds names.
"""
from __future__ import annotations

import os
import re
import shlex
import sys
import types

from ..compile import source
from ..errors import CompileError, KernelError
from ..kernel import cells
from ..kernel.module import Function, RawModule, Template

_cache: dict = {}          # (magic line, cell) -> RawModule, so re-running a cell is instant


class MagicUsageError(KernelError):
    """The ``%%cuda`` line itself is wrong (an unknown option, a missing value)."""


class CellCompileError(CompileError):
    """A %%cuda cell did not compile. Shown as the message alone: the caret already points into
    the cell, so the 'raised by' line KernelErrors add would only name IPython's machinery."""

    @property
    def _render_traceback_(self):
        if os.environ.get("COURSE_LIB_TRACEBACK"):
            raise AttributeError("_render_traceback_")
        return lambda: f"\x1b[0;31mCompileError\x1b[0m: {self}".splitlines()


def parse_line(line: str) -> dict:
    """Split the magic line into defines, instantiations, module name, quiet flag, NVRTC options.

        parse_line("-DTILE=32 -i 'tile<float, 32>' -q")["defines"]      # {'TILE': '32'}
    """
    opts = dict(defines={}, instantiate=[], name=None, quiet=False, options=[])
    try:
        words = shlex.split(line)
    except ValueError as exc:
        raise MagicUsageError(f"cannot read the %%cuda line: {exc}", hint="check the quotes") from None
    it = iter(words)
    for w in it:
        try:
            if w in ("-D", "--define"):
                w = "-D" + _value(w, next(it))
            if w.startswith("-D"):
                key, _, val = w[2:].partition("=")
                if not key.strip():
                    raise MagicUsageError(f"%%cuda option {w} defines no name",
                                          hint="-DNAME=VALUE, e.g. -DTILE=32 (or -DDEBUG for 1)")
                opts["defines"][key] = val or "1"
            elif w in ("-i", "--instantiate"):
                opts["instantiate"].append(_value(w, next(it)))
            elif w.startswith("--instantiate="):
                opts["instantiate"].append(w.split("=", 1)[1])
            elif w in ("--name", "-n") or w.startswith("--name="):
                opts["name"] = _module_name(w, w.split("=", 1)[1] if "=" in w else _value(w, next(it)))
            elif w in ("-q", "--quiet"):
                opts["quiet"] = True
            elif w.startswith("-"):
                opts["options"].append(w)
            else:
                raise MagicUsageError(f"%%cuda does not understand '{w}'",
                                      hint="options: -DNAME=VALUE, --instantiate 'tile<float, 32>', "
                                           "--name MOD, --quiet, or NVRTC flags such as --std=c++17")
        except StopIteration:
            raise MagicUsageError(f"%%cuda option {w} needs a value", hint=f"e.g. {w} VALUE") from None
    return opts


def _value(option, value):
    """The value after an option, which is never the next option ("-i --name m" forgot the value)."""
    if value.startswith("-"):
        raise MagicUsageError(f"%%cuda option {option} needs a value, but the next word is the option {value}",
                              hint=f"e.g. {option} " + ("'tile<float, 32>'" if option in ("-i", "--instantiate")
                                                        else "TILE=32" if option in ("-D", "--define") else "mod"))
    return value


def _module_name(option, value):
    if not value.isidentifier():
        raise MagicUsageError(f"%%cuda {option} {value!r}: the module is bound to a Python name, and this is not one",
                              hint="letters, digits and _, not starting with a digit, e.g. --name tiles")
    return value


def compile_cell(line: str, cell: str) -> tuple[RawModule, dict]:
    """Compile one cell; returns (module, {python name: Function or Template}).

        module, names = compile_cell("-DK=2", "__global__ void k(float* a) { a[0] = K; }")
    """
    opts = parse_line(line)
    aliases = {}
    for item in opts["instantiate"]:
        alias, eq, expr = item.partition("=")
        if eq and "<" not in alias and alias.strip().isidentifier():
            aliases[expr.strip()] = alias.strip()
        else:
            aliases[item.strip()] = None
    key = (line, cell)
    module = _cache.get(key)
    if module is None:
        # the magic line stays as a comment so that line N of the source is line N of the cell
        code = source.read("// %%cuda " + line.rstrip("\\ ") + "\n" + cell)     # read once; the module keeps it
        std = () if any(o.lstrip("-").startswith("std") for o in opts["options"]) else ("-std=c++17",)
        module = RawModule(code=code, options=(*std, *opts["options"]),
                           name_expressions=tuple(aliases), defines=opts["defines"],
                           filename=f"{opts['name'] or next(iter(code.names), 'cell')}.cu")
        try:
            module.compile()
        except CompileError as exc:
            raise CellCompileError(exc.message, diagnostics=exc.diagnostics, log=exc.log, hint=exc.hint,
                                   filename=exc.filename, source_line=exc.source_line) from None
        _cache[key] = module
    return module, bind_names(module, aliases, opts["name"])


def bind_names(module: RawModule, aliases: dict, module_name=None) -> dict:
    names = {}
    entries = module._compiled.entries
    lowered = set(module._compiled.lowered_names.values())
    for expr, alias in aliases.items():
        base = expr.split("<")[0].strip()
        unique = sum(e.split("<")[0].strip() == base for e in aliases) == 1
        py = alias or (base if unique else re.sub(r"\W+", "_", expr).strip("_"))
        names[py] = module.get_function(expr)
    for entry in entries:
        if entry in lowered:
            continue
        base = source.mangled_base(entry) or entry
        if base not in names:
            names[base] = module.get_function(base if base != entry and _unique_base(entries, base) else entry)
    for name in module.source.templates:
        if name not in names:
            names[name] = Template(module, name)
    if module_name:
        names[module_name] = module
    return names


def _unique_base(entries, base):
    return sum((source.mangled_base(e) or e) == base for e in entries) == 1


def describe(names: dict) -> str:
    """One line per bound name: what a student can now call."""
    out = []
    for py, obj in names.items():
        if isinstance(obj, Function):
            sig = ", ".join(f"{p.ctype} {p.name}" for p in obj.signature) if obj.signature else "..."
            label = obj.name if obj.name == py else f"{py} = {obj.name}"
            out.append(f"{label}({sig})")
        elif isinstance(obj, Template):
            out.append(f"{py}[...]  (template: index it with its arguments)")
        else:
            out.append(f"{py}  (the module)")
    return "compiled: " + ("; ".join(out) if out else "no __global__ kernels in this cell")


# ---------------------------------------------------------------------------------- IPython

def cuda(line: str, cell: str):
    """The %%cuda cell magic (see the module docstring)."""
    from IPython import get_ipython
    ip = get_ipython()
    try:
        module, names = compile_cell(line, cell)
    except KernelError as exc:      # the names keep the previous cell's kernels: a check must not judge those
        cells.failed(cell, exc)
        raise
    cells.compiled(module)
    for warning in shadowed(ip.user_ns, names):
        print(warning, file=sys.stderr)
    ip.user_ns.update(names)
    if not parse_line(line)["quiet"]:
        print(describe(names))


def shadowed(namespace: dict, names: dict) -> list[str]:
    """A line for each name the cell would take from something else the notebook holds (a kernel
    named ``np`` would replace numpy, silently): a kernel, template or module replaced is no news."""
    out = []
    for py in names:
        old = namespace.get(py, Function)
        if old is Function or isinstance(old, (Function, Template, RawModule)):
            continue
        what = f"the module {old.__name__}" if isinstance(old, types.ModuleType) else f"a {type(old).__name__}"
        out.append(f"warning: {py} was {what}; it is now this cell's kernel. Rename the kernel to keep {py} "
                   f"(the next use of {py} gets the kernel)")
    return out


def register(ip=None) -> None:
    """Register %%cuda in the running IPython, if any (KernelErrors already display briefly).

        import course_lib.notebook.magic   # registers on import; or %load_ext course_lib
    """
    if ip is None:
        try:
            from IPython import get_ipython
            ip = get_ipython()
        except ImportError:
            return
    if ip is None:
        return
    ip.register_magic_function(cuda, magic_kind="cell", magic_name="cuda")


def load_ipython_extension(ip):
    register(ip)


register()  # importing this module inside IPython is enough to get %%cuda
