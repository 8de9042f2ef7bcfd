"""Everything outside a notebook's kernel, in a wing per audience (as nbgrader lays out its apps):

- ``student/``: what a student runs: ``course_lab`` (the ``course-lab`` command), ``server`` (a JupyterLab
  for the course), ``workcopy`` (the student's own copy of the notebooks), ``container`` (``--container``
  on macOS), ``keepboth`` (the hub pull's git merge driver);
- ``instructor/``: the instructor's tools, ``cli`` (``python -m course_lib instructor``, argument parsing
  only) over one module per command: ``check``, ``refresh``, ``release`` (build), ``publish``,
  ``assignments`` (the nbgrader export), ``authoring`` (new-exercise and the exercise checks), ``colab``,
  ``report`` (the class report and leaderboards, over ``classbook``, ``class_summary``, ``leaderboard``,
  ``gpu_times``, ``report_page``, ``report_figures``);
- ``grader/``: grading a class: ``sandbox`` (bubblewrap), ``box`` (bounds on a whole submission: time, memory
  with files, files, processes, output) over ``cgroups`` (v2, v1, systemd-run), ``kernel`` (the Jupyter kernel
  in the sandbox and its capped client), ``trusted`` (the checker on a submission's CUDA
  text, run sandboxed), ``hidden`` (hidden shapes and the course's seed), ``inert`` and ``inert_markup`` (a
  graded notebook with nothing of the student's that runs where the instructor looks), ``verdicts`` and
  ``verdict_store`` (the checker's records in a graded notebook, signed, and every graded submission's),
  ``nbgrader_hooks`` (nbgrader's preprocessors swapped for the course's; imports nbgrader, the
  ``[instructor]`` extra);
- shared by the three: ``course`` (where the course lives, its Colab cell, its nbgrader id), ``folders``
  (writable folders, keeping an edited file), ``stored`` (byte-stable notebooks and the server's save hook).

The grader imports neither the instructor's tools nor the student's launcher, and the student's launcher
imports neither of the others (pyproject.toml's import-linter contract "lab: ..."), so a grading machine
needs only the grader and a student's server only its wing.
"""
