"""The house rules of course_lib (docs/ARCHITECTURE.md), checked on every run so that they stay true:
- the wings are layered and no module takes part in an import loop, imports inside functions included
  (import-linter's contracts in pyproject.toml);
- no module over 300 lines, no function over 60, every module says what it does in a docstring;
- the top level is the public face only, and no wing imports it back (`import course_lib` inside the library
  would tie every wing to all the others)."""
import ast
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "course_lib"
MODULES = sorted(PACKAGE.rglob("*.py"))
# modules known to break a rule, each with the reason and who mends it (strict: the mark goes when it holds)
KNOWN: dict = {}
TOP_LEVEL = {"__init__.py", "__main__.py", "errors.py", "paths.py"}


def _name(path: Path) -> str:
    return str(path.relative_to(REPO))


def test_the_import_contracts_hold(capsys):
    importlinter = pytest.importorskip("importlinter.cli", reason="import-linter comes with the [test] extra")
    here = os.getcwd()
    os.chdir(REPO)             # lint-imports reads pyproject.toml from the working directory
    try:
        status = importlinter.lint_imports(no_cache=True, no_logo=True)
    finally:
        os.chdir(here)
    out = capsys.readouterr().out
    assert status == 0, out[out.find("Broken contracts"):] or out


@pytest.mark.parametrize("path", [pytest.param(p, marks=pytest.mark.xfail(strict=True, reason=KNOWN[_name(p)]))
                                  if _name(p) in KNOWN else p for p in MODULES], ids=_name)
def test_modules_are_small_and_say_what_they_do(path):
    text = path.read_text()
    tree = ast.parse(text)
    assert len(text.splitlines()) <= 300, f"{_name(path)} has {len(text.splitlines())} lines; split it (<= 300)"
    long = [f"{n.name} ({n.end_lineno - n.lineno + 1} lines)" for n in ast.walk(tree)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.end_lineno - n.lineno + 1 > 60]
    assert not long, f"{_name(path)}: functions over 60 lines: {', '.join(long)}"
    doc = ast.get_docstring(tree) or ""
    assert len(doc.split()) >= 5, f"{_name(path)} needs a docstring that says what the module does"


def test_the_top_level_is_the_public_face_only():
    top = {p.name for p in PACKAGE.glob("*.py")}
    assert top <= TOP_LEVEL, f"modules at course_lib's top level that belong in a wing: {sorted(top - TOP_LEVEL)}"


@pytest.mark.parametrize("path", [p for p in MODULES if p.parent != PACKAGE], ids=_name)
def test_no_wing_imports_the_package_top(path):
    tree = ast.parse(path.read_text())
    depth = len(path.relative_to(PACKAGE).parts) - 1            # levels below course_lib
    wings = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    wings |= {p.stem for p in PACKAGE.glob("*.py")} - {"__init__", "__main__"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            bad = [a.name for a in node.names if a.name == "course_lib"]
        elif isinstance(node, ast.ImportFrom):
            to_top = (node.level == depth + 1 and not node.module) or (node.level == 0 and node.module == "course_lib")
            bad = [a.name for a in node.names if a.name not in wings] if to_top else []
        else:
            continue
        assert not bad, (f"{_name(path)}:{node.lineno} imports {', '.join(bad)} from course_lib's top level; "
                         "import it from the wing that owns it")
