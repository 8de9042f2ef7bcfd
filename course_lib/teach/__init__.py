"""Teaching with kernels: exercises and their checkers, solutions, classic mistakes, debug tasks, predictions.

Modules: ``exercises`` (``get``, ``check``, ``reveal``) over ``exercise`` (what an exercise is),
``exercise_list`` (the course's exercises), ``runs`` (running a student's kernel on every shape and
saying why a result is wrong) and ``properties`` (what an exercise requires beyond a right result);
``solutions`` (the marker convention and the solution files), ``mistakes`` (the catalog in
``mistakes.toml``), ``debug`` (fix-this-kernel tasks), ``prediction`` (predict, then run).
"""
