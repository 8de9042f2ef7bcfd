"""Stands in for the rfc3987_syntax package inside the grading sandbox, where importing it cost every notebook 1.3 s.

jsonschema imports rfc3987_syntax, where it is installed (Jupyter's jsonschema[format-nongpl] brings it), for
its "iri" format checkers, and rfc3987_syntax builds a Lark Earley parser as it is imported: about 1.3 s of CPU
in every process that imports nbformat, which ``cl.setup()`` does through plotly's notebook renderers. That was
two thirds of a graded notebook's kernel start (upstream: python-jsonschema/jsonschema#1428). No notebook of the
course validates IRIs, so in the sandbox (sandbox.environment puts this folder first on PYTHONPATH) the import
fails as if the package were not installed and jsonschema goes on without those two format checkers. Nothing
changes outside the sandbox.
"""
raise ImportError("rfc3987_syntax is left out of the grading sandbox (course_lib/lab/grader/sandbox_site)")
