"""The instructor's tools, one module per command of ``python -m course_lib instructor`` (cli parses the
command line and calls them): check, refresh, release (build), publish, assignments (nbgrader export),
authoring (new-exercise), colab. May use the student's wing (the kernel environment notebooks run in) and the
grader's (the course's seed); neither uses this one."""
