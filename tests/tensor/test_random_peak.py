"""``rand``/``randn`` allocate their result once: peak memory is the result plus one chunk of float64 draws."""
import tracemalloc

import numpy as np
import pytest

import edutorch as et


@pytest.mark.parametrize("name", ["rand", "randn"])
@pytest.mark.parametrize("dtype", [et.float32, et.float16, et.float64])
def test_random_tensors_peak_at_their_result_size(name, dtype):
    """They used to draw float64 for the whole result, then cast: 3x a float32 result (5x float16)."""
    n = 4_000_000
    tracemalloc.start()
    try:
        t = getattr(et, name)(n, dtype=dtype)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    result = t.numpy().nbytes
    assert peak <= result + (8 << 20) + (1 << 20), f"peak {peak / result:.2f}x the result"


@pytest.mark.parametrize("name, draw", [("rand", "random"), ("randn", "standard_normal")])
def test_random_tensors_draw_the_numbers_of_one_float64_draw(name, draw):
    """Drawing in chunks does not change the numbers a seed gives (lessons print seeded values)."""
    et.manual_seed(3)
    values = getattr(et, name)(3, 1_000_001).numpy()
    expected = getattr(np.random.default_rng(3), draw)((3, 1_000_001)).astype(np.float32)
    assert values.dtype == np.float32 and np.array_equal(values, expected)
