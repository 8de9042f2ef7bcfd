"""The simulated memories, by PTX state space: global memory, each block's shared and each thread's local memory.

``memory`` holds global memory (each argument array and module-level variable a buffer at its own
fake device address, so that a stray access misses every buffer), the generic-address windows of
shared and local memory, and the alignment, gather and scatter helpers every access uses;
``block_memory`` a batch's shared memory (one region per block, starting at 1024 as on Hopper) and
local memory (one frame per thread); ``layout`` where a launch's variables are placed and which
blocks of the grid it runs.

Not here: which instruction touches which byte, and what that costs (``isa.access``,
``isa.atomics``; the counting rules are ``results.metrics``); registers (``state``); the race
detector's shadow of shared memory (``checks.shadow``); the asynchronous units that also write
shared memory (``movement``).
"""
