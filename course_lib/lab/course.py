"""Where the course lives and what every notebook starts with: shared by the three wings of lab/.

    course.COURSE_REPO, course.BRANCH          # the student repository (the one place to change it)
    course.COURSE_ID                           # the nbgrader course id (instructor's export, the hub's exchange)
    course.colab_badge("05_bank_conflicts.ipynb"), course.colab_install_cell()
    course.notebooks_dir()                     # the course's notebooks/ (a checkout, or found from the cwd)

This module only answers; it writes nothing and imports no other part of lab/.
"""
from __future__ import annotations

import os
from pathlib import Path

from .. import paths

COURSE_ID = "transpose-course"      # nbgrader's course id: `instructor nbgrader`'s folder and the hub's exchange
COURSE_REPO = "https://github.com/transpose-course/transpose-course"   # the one place to change it
BRANCH = "main"
FIRST_NOTEBOOK = "00_start_here.ipynb"
COLAB_CLONE_DIR = "/content/transpose-course"
BADGE_SVG = "https://colab.research.google.com/assets/colab-badge.svg"


# ---------------------------------------------------------------------------- Colab

def colab_url(notebook: str, repo: str = COURSE_REPO, branch: str = BRANCH) -> str:
    """The 'Open in Colab' link of notebooks/<notebook> in `repo` (a GitHub URL)."""
    owner_name = repo.rstrip("/").removesuffix(".git").split("github.com/", 1)[-1]
    return f"https://colab.research.google.com/github/{owner_name}/blob/{branch}/notebooks/{Path(notebook).name}"


def colab_badge(notebook: str, repo: str = COURSE_REPO, branch: str = BRANCH) -> str:
    """Markdown for the badge in the title cell."""
    return f"[![Open In Colab]({BADGE_SVG})]({colab_url(notebook, repo, branch)})"


def colab_install_cell(repo: str = COURSE_REPO) -> str:
    """The source of the first code cell (tag it ``colab-install``). Outside Colab, or when the course
    is already installed (a rerun, a restarted session), it does nothing; a clone left by an
    interrupted run is reused. A plain (not editable) install, because an editable one is only
    importable after a runtime restart (its import hook is a .pth file, read when Python starts).
    pip adds only what Colab lacks: Colab already has numpy, plotly, ipywidgets 7, CuPy and (with
    torch) NVRTC (tests/lab/test_colab.py checks this against a list of Colab's packages)."""
    return ("# On Colab only: install the course (does nothing anywhere else, or once it is installed)\n"
            "import importlib.util, sys\n"
            "if \"google.colab\" in sys.modules and importlib.util.find_spec(\"course_lib\") is None:\n"
            f"    !test -d {COLAB_CLONE_DIR} || git clone -q --depth 1 {repo} {COLAB_CLONE_DIR}\n"
            f"    %pip install -q {COLAB_CLONE_DIR}\n"
            "    importlib.invalidate_caches()")




# ---------------------------------------------------------------------------- finding things

def notebooks_dir(path: str | os.PathLike | None = None) -> Path:
    """The folder to open: `path`, else notebooks/ of the checkout this package was installed from
    (pip install -e .), else the course's notebooks/ in the current folder or one above it (a wheel
    run from a clone, or from its my-notebooks/). Raises FileNotFoundError saying where it looked."""
    if path is not None:
        p = Path(path).expanduser().resolve()
        if not p.is_dir():
            raise FileNotFoundError(f"{p} is not a folder")
        return p
    checkout = Path(paths.REPO) / "notebooks"
    if checkout.is_dir():
        return checkout
    # above the current folder only a folder holding the course's first notebook counts: any
    # notebooks/ a student has above their home is not the course
    here = Path.cwd().resolve()
    for folder in (here, *here.parents):
        if (folder / "notebooks" / FIRST_NOTEBOOK).is_file():
            return folder / "notebooks"
    raise FileNotFoundError(f"cannot find the course's notebooks/ folder: looked in {checkout} (beside this "
                            f"course_lib) and for notebooks/{FIRST_NOTEBOOK} in {here} and every folder above "
                            f"it. Run it inside your clone of {COURSE_REPO} (`pip install -e \".[lab]\"` there), "
                            "or name the notebooks: course-lab path/to/notebooks, python -m course_lib instructor "
                            "CMD path/to/notebooks/*.ipynb")
