"""CUDA's headers for NVRTC (course_lib.compile.headers): cuda_pipeline.h, <cuda/pipeline>,
<cuda/barrier> and tensor-map code compile in the default install with both NVRTC 12 and 13, each
with the header wheels of its own version; a header that is missing says which wheel, a misspelt
one says so, a host header says to remove it."""
import pytest

import course_lib as cl
from course_lib.compile import headers, nvrtc_lib

PIPELINE = r'''
#include <cuda_pipeline.h>
#include <cuda/pipeline>
#include <cuda/barrier>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void primitives(float* out, const float* in) {
    __shared__ float s[128];
    __pipeline_memcpy_async(&s[threadIdx.x], &in[threadIdx.x], sizeof(float));
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();
    out[threadIdx.x] = s[127 - threadIdx.x];
}
extern "C" __global__ void pipeline(float* out, const float* in) {
    __shared__ float s[128];
    cuda::pipeline<cuda::thread_scope_thread> p = cuda::make_pipeline();
    p.producer_acquire();
    cuda::memcpy_async(&s[threadIdx.x], &in[threadIdx.x], cuda::aligned_size_t<4>(4), p);
    p.producer_commit();
    p.consumer_wait();
    __syncthreads();
    out[threadIdx.x] = s[127 - threadIdx.x];
    p.consumer_release();
}
extern "C" __global__ void block_copy(float4* out, const float4* in) {
    __shared__ float4 s[128];
#pragma nv_diag_suppress static_var_with_dynamic_init
    __shared__ cuda::barrier<cuda::thread_scope_block> bar;
    auto block = cg::this_thread_block();
    if (block.thread_rank() == 0) init(&bar, block.size());
    block.sync();
    cuda::memcpy_async(block, s, in, sizeof(s), bar);
    bar.arrive_and_wait();
    out[threadIdx.x] = s[127 - threadIdx.x];
}
'''


def _nvrtc(major):
    try:
        return nvrtc_lib.load(major)
    except Exception as exc:          # the wheel of this NVRTC is not installed here
        pytest.skip(str(exc))


@pytest.mark.parametrize("major", [13, 12])
def test_pipeline_and_barrier_headers_compile_with_each_nvrtc(major):
    lib = _nvrtc(major)
    opts = ["--gpu-architecture=compute_90"] + headers.include_options(major)
    ptx = lib.compile(PIPELINE, "pipe.cu", opts).ptx
    assert "cp.async.ca.shared.global" in ptx and "cp.async.wait_group" in ptx
    assert "cp.async.bulk.shared::cluster.global" in ptx and "mbarrier.try_wait" in ptx


@pytest.mark.parametrize("major", [13, 12])
def test_tensor_map_kernels_compile_with_each_nvrtc(major):
    lib = _nvrtc(major)
    src = (cl.paths.KERNELS / "tma.cu").read_text()
    opts = ["--gpu-architecture=compute_90", f"--include-path={cl.paths.KERNELS}"] + headers.include_options(major)
    out = lib.compile(src, "tma.cu", opts, name_expressions=["tma_tile<float, 64, 4, 128>", "tma_copy<float, 128>"])
    assert "cp.async.bulk.tensor.2d.shared::cluster.global" in out.ptx
    assert "cp.async.bulk.tensor.2d.global.shared::cta" in out.ptx
    assert ".param .align 64 .b8" in out.ptx               # CUtensorMap by value: 128 bytes, aligned 64


def test_raw_module_compiles_the_headers_in_the_default_install():
    m = cl.RawModule(code=PIPELINE, filename="pipe.cu").compile()
    assert set(m.compiled.entries) == {"primitives", "pipeline", "block_copy"}


def test_course_cuda_h_declares_the_tensor_map_type_only():
    text = (headers.OWN / "cuda.h").read_text()
    assert "CUtensorMap" in text and "cuTensorMapEncodeTiled(" not in text
    assert headers.folders(13)[0] == headers.OWN


def test_missing_header_hints():
    with pytest.raises(cl.CompileError) as err:
        cl.RawModule(code="#include <cuda/pipelin>\n__global__ void k() {}\n").compile()
    assert "check its spelling" in err.value.hint and "__half" not in err.value.hint
    with pytest.raises(cl.CompileError) as err:
        cl.RawModule(code="#include <vector>\n__global__ void k() {}\n").compile()
    assert "remove the #include" in err.value.hint
    assert "pip install 'nvidia-cuda-cccl==13.0.*'" in headers.missing_hint("cuda/barrier", 13) \
        or "not among" in headers.missing_hint("cuda/barrier", 13)
    assert headers.wheel_for("cuda_pipeline.h", 12) == "nvidia-cuda-runtime-cu12"
    assert headers.wheel_for("cuda/barrier", 12) == "nvidia-cuda-cccl-cu12"
    assert headers.wheel_for("iostream", 13) is None
