"""Teaching with kernels: exercises and their checkers, solutions, classic mistakes, debug tasks, predictions.

Modules: ``exercises`` (``get``, ``check``, ``grade``, ``reveal``) over ``exercise`` (what an exercise
is), ``exercise_list`` (the course's exercises), ``runs`` (running a student's kernel on every shape
and saying why a result is wrong), ``properties`` (what an exercise requires beyond a right result),
``origin`` (refusing a kernel compiled from the course's own sources) and ``footprint`` (each block
its own tile, each element moved once, 64-bit offsets on a launch over 2^32 elements);
``solutions`` (the marker convention, the solution files where they are kept, self-study and graded
modes), ``mistakes`` (the catalog in ``mistakes.toml``), ``debug`` (fix-this-kernel tasks),
``prediction`` (predict, then run).
"""
