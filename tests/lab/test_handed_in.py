"""autograded/ keeps a submission's notebooks only (course_lib.lab.grader.handed_in): formgrader serves that
folder's files from the instructor's server, so a page a student hands in would run as the instructor there.
The end-to-end proof, a notes.html opened in a live formgrader, is tests/lab/test_formgrader.py."""
import os

from course_lib.lab.grader import handed_in


def test_only_notebooks_stay_and_links_are_removed_never_followed(tmp_path):
    outside = tmp_path / "instructor"
    outside.mkdir()
    (outside / "gradebook.db").write_text("keep me")
    sub = tmp_path / "autograded" / "mallory" / "03_columns"
    (sub / "figures" / "deep").mkdir(parents=True)
    (sub / "03_columns.ipynb").write_text("{}")
    (sub / "notes.html").write_text("<script>alert(1)</script>")
    (sub / "figures" / "plot.svg").write_text("<svg onload='x()'/>")
    (sub / "figures" / "deep" / "extra.ipynb").write_text("{}")
    os.symlink(outside, sub / "linked")                                  # a folder link: removed, not walked
    os.symlink(outside / "gradebook.db", sub / "looks.ipynb")            # a link named like a notebook
    removed = handed_in.keep_notebooks_only(sub)
    assert removed == ["figures/plot.svg", "linked", "looks.ipynb", "notes.html"]
    left = sorted(p.relative_to(sub).as_posix() for p in sub.rglob("*"))
    assert left == ["03_columns.ipynb", "figures", "figures/deep", "figures/deep/extra.ipynb"]
    assert (outside / "gradebook.db").read_text() == "keep me"


def test_a_missing_folder_or_a_link_to_one_is_left_alone(tmp_path):
    assert handed_in.keep_notebooks_only(tmp_path / "none") == []
    real = tmp_path / "real"
    real.mkdir()
    (real / "x.html").write_text("x")
    os.symlink(real, tmp_path / "link")
    assert handed_in.keep_notebooks_only(tmp_path / "link") == [] and (real / "x.html").exists()


def test_nbgraders_timestamp_stays_so_that_a_resubmission_is_graded(tmp_path):
    sub = tmp_path / "autograded" / "fay" / "11_capstone"
    (sub / "deep").mkdir(parents=True)
    (sub / "timestamp.txt").write_text("2026-12-01 10:30:00.000000 UTC")
    (sub / "deep" / "timestamp.txt").write_text("2026-12-01")                   # not at the top: a student's file
    (sub / "11_capstone.ipynb").write_text("{}")
    assert handed_in.keep_notebooks_only(sub) == ["deep/timestamp.txt"]
    assert (sub / "timestamp.txt").read_text().startswith("2026-12-01 10:30")
    (sub / "timestamp.txt").write_text("<script>" + "x" * 100)                  # no timestamp of nbgrader's
    assert handed_in.keep_notebooks_only(sub) == ["timestamp.txt"]
