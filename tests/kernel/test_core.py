"""The core promise end to end: compile with NVRTC, simulate, exact result and metrics."""
import numpy as np
import pytest

import course_lib as cl
from course_lib import transposes
from course_lib.transposes import verify

METRIC = "l1tex__t_sectors_pipe_lsu_mem_global_op_{}.sum"


@pytest.mark.parametrize("key", [k for k, s in transposes.SPECS.items() if s.bench])
def test_every_course_kernel_is_correct_on_awkward_shapes(key):
    """float32 (float16 for ldsm) on the large awkward shapes it takes (a TMA kernel refuses rows that
    are not whole 16-byte pieces); tests/transposes/test_kernels.py covers every dtype (smaller)."""
    dtype = np.float32 if 4 in transposes.SPECS[key].itemsizes else np.float16
    t = transposes.kernel(key, dtype)
    results = verify.check(t)
    assert results and (1000, 1030) in [s for s, _ in results] or t.refuses(1000, 1030)
    for shape, result in results:
        assert result.ok, f"{key} {shape}: {result}"


def test_naive_row_loads_4_sectors_stores_32():
    t = transposes.kernel("naive_row", np.float32)
    _, run = t.simulate(transposes.random_matrix(256, 256, np.float32))
    assert run.ratio("global", "ld") == 4.0
    assert run.ratio("global", "st") == 32.0


def test_tile_column_read_is_32_way_and_padding_clears_it():
    a = transposes.random_matrix(64, 64, np.float32)
    _, run = transposes.kernel("tile", np.float32).simulate(a)
    assert run.ratio("shared", "ld") == 32.0
    assert run.ratio("shared", "st") == 1.0
    assert run.ratio("global", "st") == 4.0
    _, run = transposes.kernel("padded", np.float32).simulate(a)
    assert run.ratio("shared", "ld") == 1.0


def test_compile_error_points_at_line_and_column():
    src = "extern \"C\" __global__ void k(float* a)\n{\n    a[0] = b;\n}\n"
    with pytest.raises(cl.CompileError) as e:
        cl.RawModule(code=src, filename="cell.cu").get_function("k")
    msg = str(e.value)
    assert "line 3" in msg and "column 12" in msg and '"b" is undefined' in msg
    assert "^" in msg


def test_cold_copies_cover_three_l2s():
    from course_lib.gpu import cold_copies
    l2 = 50 << 20
    assert cold_copies(4 << 20, l2) == 38                  # 1000x1030 floats: 38 x 4 MB >= 150 MB
    assert cold_copies(256 << 20, l2) == 2                 # bigger than L2: still two, never one
    assert all(cold_copies(n, l2) * n >= 3 * l2 for n in (1, 4096, 3 << 20, 77 << 20))

