"""widgets._common: statistics read in slices, seeded samples."""
import numpy as np
import pytest

import widgets._common as common
from widgets._common import norm_of, sample_of, stats_of


@pytest.mark.parametrize("chunk", [7, 1 << 20])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.bool_])
def test_stats_in_slices_equal_numpy_on_the_whole_array(monkeypatch, chunk, dtype):
    monkeypatch.setattr(common, "STATS_CHUNK", chunk)
    rng = np.random.default_rng(1)
    values = (rng.standard_normal((13, 11)) * 3 + 2).astype(dtype)
    values.reshape(-1)[::5] = 0
    s, whole = stats_of(values), values.astype(np.float64)
    assert s.mean == pytest.approx(whole.mean(), rel=1e-12)
    assert s.std == pytest.approx(whole.std(ddof=1), rel=1e-9)
    assert (s.min, s.max) == (whole.min(), whole.max())
    assert s.norm == pytest.approx(np.sqrt((whole ** 2).sum()), rel=1e-12)
    assert s.zeros == np.count_nonzero(whole == 0) / whole.size


@pytest.mark.parametrize("chunk", [7, 1 << 20])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.bool_])
def test_norm_of_is_the_norm_of_stats_of(monkeypatch, chunk, dtype):
    monkeypatch.setattr(common, "STATS_CHUNK", chunk)
    values = (np.random.default_rng(2).standard_normal((13, 11)) * 3).astype(dtype)
    assert norm_of(values) == stats_of(values).norm
    assert norm_of(values) == pytest.approx(np.linalg.norm(values.astype(np.float64)), rel=1e-12)
    assert norm_of(np.zeros(0)) == 0.0 and np.isnan(norm_of(np.array([1.0, np.nan])))


def test_stats_of_nan_empty_and_one_value():
    assert np.isnan(stats_of(np.array([1.0, np.nan])).max)
    assert np.isnan(stats_of(np.array([1.0, np.nan])).norm)
    assert stats_of(np.zeros(0)).zeros == 0.0 and np.isnan(stats_of(np.zeros(0)).mean)
    one = stats_of(np.float32(3.0))
    assert one.mean == 3.0 and np.isnan(one.std)


def test_sample_of_is_the_array_when_small_and_a_seeded_sample_when_large():
    small = np.arange(10)
    assert sample_of(small, 10) is not None and sample_of(small, 10).tolist() == list(range(10))
    big = np.arange(1000.0)
    a, b = sample_of(big, 50), sample_of(big, 50)
    assert a.size == 50 and np.array_equal(a, b) and set(a) <= set(big)
    assert not np.array_equal(a, sample_of(big, 50, seed=1))
    positions = common._sample_positions(1000, 50, 0)  # drawn once, shared, read-only
    assert positions is common._sample_positions(1000, 50, 0) and not positions.flags.writeable
    assert np.array_equal(a, big[positions]) and np.all(np.diff(positions) >= 0)
