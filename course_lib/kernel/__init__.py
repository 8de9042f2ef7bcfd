"""A compiled kernel you can launch: the CuPy-shaped front door and the one launch check.

Modules: ``module`` (``RawModule``, ``Function``, ``Template``: compile lazily, run with
``fn.simulate(...)`` on the CPU or ``fn(...)`` on a GPU), ``launch`` (the check every launch passes
once, giving a ``Launch`` that the simulator, the guard and the GPU runner take as it is), ``guard``
(a GPU launch is first simulated on its corner blocks and refused if it would fault).
"""
