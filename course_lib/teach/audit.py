"""What ``instructor check`` asks of an exercise folder beyond its notebook's cells.

    audit.problems("inplace")       # [] or what is wrong, each naming the file and the fix

The folder must load (``spec``: the schema, strictly); its solution must compile and pass its checker
for the default and for **every** ``[[variants]]`` table (a variant whose ``T`` the solution cannot
compile with would otherwise reach one student in four); the solution's kernel must take the parameter
list exercise.toml declares (what ``get`` shows is what the stub declares); ``wrong.toml``'s
replacements and mutations must still apply (``mutants``). The wrong kernels themselves run in the tests
(tests/teach/test_exercises.py), not here: a check stays within seconds per exercise. Nothing here
edits a file.
"""
from __future__ import annotations

from ..errors import KernelError
from ..kernel.module import RawModule
from . import exercises, mutants, solutions, spec, variants
from .exercise_list import BROKEN, folder


def problems(key: str) -> list[str]:
    """Everything wrong with exercises/<key>/ (see the module), each a sentence with the fix."""
    if key in BROKEN:
        return [f"{BROKEN[key].message} (hint: {BROKEN[key].hint})"]
    try:
        base = spec.load(folder(key))
    except spec.SpecError as exc:
        return [f"{exc.message} (hint: {exc.hint})"]
    if key not in solutions.keys():
        return []
    out = []
    defaults = spec.defaults(spec.read(folder(key)))
    for i, v in enumerate([{}] + variants.declared(key)):
        name = "the default" if not i else f"variants[{i - 1}] ({', '.join(f'{k} = {x!r}' for k, x in v.items())})"
        out += _variant(key, {**defaults, **v}, name)
    raw = solutions._cell(solutions.path(key).read_text())
    try:
        mutants.written(folder(key), base, raw)
    except spec.SpecError as exc:
        out.append(f"{exc.message} (hint: {exc.hint})")
    out += mutants.stale(folder(key), mutants.derive(base, lambda p: solutions.body(key, p)))
    return out


def _compile(text: str, kernel: str):
    """The kernel `kernel` of a cell body, compiled as a %%cuda cell without options would be."""
    module = RawModule(code=text, options=("-std=c++17",), filename=f"{kernel}.cu")
    module.compile()
    return module.get_function(kernel) if kernel in module.source.names else None


def _variant(key: str, params: dict, name: str) -> list[str]:
    where = f"exercises/{key}/solution.cu"
    try:
        ex = spec.load(folder(key), params)
        fn = _compile(solutions.body(key, params), ex.kernel)
    except spec.SpecError as exc:
        return [f"{name}: {exc.message}"]
    except KernelError as exc:
        return [f"{where} does not compile for {name}: {exc.message.splitlines()[0]} — change or remove that "
                "[[variants]] table in exercise.toml (every student who draws it would get a stub that cannot work)"]
    if fn is None:
        return [f"{where} defines no __global__ void {ex.kernel}(...) (exercise.toml's kernel) for {name}: rename one "
                "of them (python -m course_lib instructor check --sync-stubs follows solution.cu's kernel)"]
    if ex.custom:
        wrong = _signature(ex, fn)
        if wrong:
            return [f"{where}: {wrong}"]
    with solutions.self_study():
        report = exercises.check(ex, fn, gpu=False)
    return [] if report.ok else [f"the solution fails its checker for {name}:\n{report!r}"]


def _signature(ex, fn) -> str | None:
    declared = [(a.pointer, a.name) for a in ex.parameters]
    given = [(p.pointer, p.name) for p in fn.signature or ()]
    if declared != given:
        return (f"{fn.name}({', '.join(map(str, fn.signature or ()))}) is not exercise.toml's signature "
                f"({ex.signature}): make them the same (get() shows exercise.toml's to students)")
    return None
