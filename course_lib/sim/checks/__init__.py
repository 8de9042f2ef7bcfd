"""What the simulator finds beside the results: races, reads of unwritten memory, hangs, and what checkers read.

``races`` with ``shadow`` (racecheck for shared memory: RAW, WAR and WAW hazards between two
barriers), ``copy_races`` (touching shared memory an asynchronous copy is still writing),
``diagnose`` (findings and stop messages worded for a student: unwritten shared memory, divergent
or skipped barriers, a stuck mbarrier, a limit reached inside a loop) with ``recursion`` (which
device functions call themselves, for those messages), ``finding`` (the Finding a SimRun's warnings
list), ``owners`` (which blocks read and wrote each element, for the course's checkers).

Not here: errors that stop a launch at the instruction that caused them (out of bounds,
misaligned: ``isa``, with ``spaces``' checks; raised as course_lib errors); when a launch is too
costly to start (``plan``, ``cost``); the counting (``results``). The executor and the instructions
decide *when* something is recorded; these modules what it means and how it is worded.
"""
