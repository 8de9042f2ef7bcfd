// cuda.h for NVRTC (course_lib): the part of CUDA's driver API header that device code uses.
//
// The real cuda.h declares host functions (cuInit, cuTensorMapEncodeTiled...) and includes C
// library headers, and NVRTC compiles device code only, so it refuses that file. A kernel needs
// just the type of a tensor map, which it takes as `const __grid_constant__ CUtensorMap map`:
// 128 bytes, aligned to 64, whose contents only the driver (cuTensorMapEncodeTiled) and the
// Tensor Memory Accelerator interpret. course_lib.TensorMap builds one from Python.
#pragma once
#ifndef CU_TENSOR_MAP_NUM_QWORDS
#define CU_TENSOR_MAP_NUM_QWORDS 16
typedef unsigned long long cuuint64_t;
typedef unsigned int cuuint32_t;
typedef struct CUtensorMap_st {
    alignas(64) cuuint64_t opaque[CU_TENSOR_MAP_NUM_QWORDS];
} CUtensorMap;
#endif
