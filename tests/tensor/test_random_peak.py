"""``randn`` allocates its result once: peak memory is the result plus one chunk of float64 draws."""
import tracemalloc

import numpy as np
import pytest

import edutorch as et


@pytest.mark.parametrize("dtype", [et.float32, et.float16, et.float64])
def test_randn_peaks_at_its_result_size(dtype):
    """It used to draw float64 for the whole result, then cast: 3x a float32 result (5x float16)."""
    n = 4_000_000
    tracemalloc.start()
    try:
        t = et.randn(n, dtype=dtype)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    result = t.numpy().nbytes
    assert peak <= result + (8 << 20) + (1 << 20), f"peak {peak / result:.2f}x the result"


def test_randn_draws_the_numbers_of_one_float64_draw():
    """Drawing in chunks does not change the numbers a seed gives (lessons print seeded values)."""
    et.manual_seed(3)
    values = et.randn(3, 1_000_001).numpy()
    expected = np.random.default_rng(3).standard_normal((3, 1_000_001)).astype(np.float32)
    assert values.dtype == np.float32 and np.array_equal(values, expected)
