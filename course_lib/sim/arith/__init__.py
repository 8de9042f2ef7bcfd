"""What PTX's arithmetic computes, bit for bit: integer, bit-manipulation and floating-point operations.

``alu`` is the table (``alu.plan(ins)``: a function over numpy arrays, its operand types and its
result type), built from ``int_ops`` (integer arithmetic, shifts, comparisons), ``bitops`` (popc,
clz, bfe, bfi, prmt, shf, lop3, ...), ``float_ops`` (f32, f64, f16, bf16 and the packed forms) with
``float_select`` (min, max, comparisons, neg, abs), ``rounding`` (correct rounding to every format
in every PTX mode) and ``exact`` (f64 correctly rounded). Where the PTX ISA leaves a result open
(NaN bits, division by zero, approximate functions) they give what an H100 gives.

Not here: registers, threads, memory, control flow. These modules see numpy arrays and PTX type
names only; reading and writing operands and running an instruction over a batch of threads is
``isa``'s (``isa.convert``, cvt, rounds with ``rounding``).
"""
