"""Grading a class: the sandbox every submission runs in, the trusted checker on a submission's kernel, the
hidden shapes and the seed they are drawn from, and nbgrader's hooks. Imports nothing of lab/instructor or
lab/student: a grading machine needs only this wing and the course library below it."""
