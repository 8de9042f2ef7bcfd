"""Where the course is opened, released and taught: everything outside a notebook's kernel.

Modules: ``course_lab`` (the ``course-lab`` command), ``server`` (a JupyterLab for the course),
``workcopy`` (the student's own copy of the notebooks), ``keepboth`` (the hub pull's git merge
driver), ``stored`` (byte-stable notebooks), ``refresh`` (re-executing notebooks for nbval),
``release`` and ``instructor`` (student and instructor copies, checks), ``grading``,
``nbgrader_hooks``, ``grader`` and ``sandbox`` (the course as an nbgrader course, graded in a
bubblewrap sandbox; the hooks import nbgrader, the ``[instructor]`` extra), ``colab`` (the Colab
install cell), ``container`` (``--container``).
"""
