"""The data-movement units beside ld/st, as state machines: cp.async, mbarrier, the TMA, ldmatrix/stmatrix.

``async_copy`` (cp.async: per-thread groups, zero-fill, completion at the wait), ``mbarrier``
(arrivals, transaction bytes, phases), ``tma`` (``TensorMap``: the driver's rules, boxes, swizzle,
out-of-bounds fill, what ncu counts for bulk and tensor copies), ``matrix_moves`` (which lane holds
which 16-bit value of an 8 x 8 matrix). Each follows the PTX ISA and what an H100 did in the
course's probes (each module says which). Which GPU generation first has each instruction is
``compile.archs.FEATURES``'s to say, not these modules': the simulator runs them all as an H100 does.

Not here: the closures that run these instructions over a batch of threads (``isa.copy_ops``,
``isa.tensor_ops``, ``isa.sync_ops``, ``isa.matrix_ops``), touching bytes a copy is still writing
(``checks.copy_races``), and what a SimRun reports of them (``results.async_result``). These modules
compute values, addresses and states; they import nothing else of the simulator.
"""
