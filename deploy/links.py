"""nbgitpuller links that hand the course's notebooks to a hub's students.

    python deploy/links.py https://hub.example.edu                  # a Markdown list, one link per notebook
    python deploy/links.py https://hub.example.edu --repo https://github.com/you/fork --branch main

A link is ``HUB/hub/user-redirect/git-pull?repo=..&branch=..&targetpath=..&urlpath=lab/tree/..``:
the hub sends the student (logging them in first) to their own server, whose nbgitpuller clones
the course into ``transpose-course/`` in their home on the first click and on later clicks pulls
what changed, keeping the student's own edits: nbgitpuller merges, and a file both the student and
the course changed goes to the image's merge driver (course_lib/lab/student/keepboth.py), which merges it
where the changes do not collide and otherwise keeps the student's file as saved and the course's
version beside it (``NAME.course-<date-time>.ipynb``), saying so in the pull's page and in
``COURSE-UPDATES.md``; a file the student deleted comes back. Then JupyterLab opens the notebook.
The repository is the student repository (``COURSE_REPO``, written by ``python -m course_lib
instructor publish``), which holds no solution: never point ``--repo`` at the instructor repository.
``targetpath`` is explicit because nbgitpuller's default keeps a ``.git`` suffix of the URL,
which would not match ``urlpath``.

This module only writes links: it needs no hub and fetches nothing.
"""
from __future__ import annotations

import argparse
import sys
from urllib.parse import quote, urlencode

from course_lib import paths
from course_lib.lab.course import BRANCH, COURSE_REPO


def target_folder(repo: str = COURSE_REPO) -> str:
    """The folder in the student's home the course is cloned into: the repository's name."""
    return repo.rstrip("/").removesuffix(".git").rsplit("/", 1)[-1]


def link(hub_url: str, notebook: str | None = None, repo: str = COURSE_REPO, branch: str = BRANCH) -> str:
    """The nbgitpuller link that pulls `repo` and opens notebooks/`notebook` (or the folder)."""
    target = target_folder(repo)
    path = f"{target}/notebooks" + (f"/{notebook}" if notebook else "")
    query = urlencode({"repo": repo, "branch": branch, "targetpath": target, "urlpath": f"lab/tree/{path}"},
                      quote_via=quote, safe="")
    return f"{hub_url.rstrip('/')}/hub/user-redirect/git-pull?{query}"


def notebook_links(hub_url: str, repo: str = COURSE_REPO, branch: str = BRANCH) -> dict:
    """{notebook file name: its link} for every notebook of the course, in order."""
    return {p.name: link(hub_url, p.name, repo, branch) for p in sorted(paths.NOTEBOOKS.glob("[0-9]*.ipynb"))}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="nbgitpuller links for the course's notebooks on a hub")
    ap.add_argument("hub_url", help="the hub's address, e.g. https://hub.example.edu")
    ap.add_argument("--repo", default=COURSE_REPO)
    ap.add_argument("--branch", default=BRANCH)
    args = ap.parse_args(argv)
    for name, url in notebook_links(args.hub_url, args.repo, args.branch).items():
        print(f"- [{name.removesuffix('.ipynb').replace('_', ' ')}]({url})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
