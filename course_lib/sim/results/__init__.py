"""What a simulated launch reports: SimRun, its metrics by Nsight Compute's rules, its listings.

``result`` (``SimRun``: metrics under Nsight Compute's names, per source line, races, warnings,
printf output, the traced block's addresses), ``metrics`` (Nsight Compute's counting rules for
global requests and sectors, shared wavefronts and bank conflicts, per warp), ``code_view`` (the
source, PTX and SASS listings), ``async_result`` (the rows, counters and notes of cp.async,
ldmatrix/stmatrix and the TMA).

Not here: running the launch (``executor``); which PTX accesses the machine code fused, which the
counts follow (``fusion``); finding races and wording diagnoses (``checks``). These modules count
and format what a launch recorded; they run nothing.
"""
