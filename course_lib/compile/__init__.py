"""CUDA C++ text -> PTX and machine code: everything that reads or compiles a kernel's source.

Modules: ``source`` (the one reader of CUDA source: ``read`` gives a ``Source`` with kernel names,
templates, parameter lists, read once; C types), ``nvrtc`` (compile for the simulator or for a GPU) on ``nvrtc_lib`` (a ctypes binding to the
NVRTC 12 and 13 that pip installs; CuPy is never asked), ``cache`` (memory and a private disk cache),
``diagnostics`` (NVRTC's log as one readable CompileError), ``ptx`` (the PTX parser the simulator
runs), ``sass`` (nvdisasm: the machine code), ``platforms`` (where NVRTC exists at all). Nothing here
runs a kernel.
"""
