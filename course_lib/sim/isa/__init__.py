"""What each PTX instruction does to a batch of threads: one closure per instruction, built once per launch.

``instructions`` is the table (opcode -> builder; ``build(ins, program)`` -> ``run(batch, mask)``);
``operands`` reads and writes registers, immediates, special registers and symbols; ``control``
names what a branch, exit or barrier tells the scheduler; ``convert`` is cvt, ``warp_ops`` shfl,
vote and activemask, ``calls`` printf, assert and trap. Memory: ``access`` (ld/st: address, space,
bounds, counts, the race detector's record), ``atomics`` (atom, red), ``param_ops`` (a parameter's
address, TensorMap arguments). Data movement beside ld/st: ``copy_ops`` (cp.async), ``tensor_ops``
(bulk and TMA copies), ``sync_ops`` (mbarrier), ``matrix_ops`` (ldmatrix, stmatrix, movmatrix).

Not here: the numbers (``arith``: what add.f32 or a rounding mode computes), the memories
(``spaces``), the units' own rules (``movement``: these modules apply them to a batch's registers
and memories), which threads run next (``scheduler``), and what a race or an unwritten read means
(``checks``, which ``access`` and the copy closures tell what they touched).
"""
