"""WeightedRandomSampler, StackDataset, ChainDataset, get_worker_info."""
import numpy as np
import pytest

import edutorch as et
from edutorch.utils.data import (
    ChainDataset, DataLoader, IterableDataset, StackDataset, TensorDataset, WeightedRandomSampler, get_worker_info,
)

TORCH_REASON = "real PyTorch not installed: parity test skipped"


def test_weighted_sampler_frequencies_length_and_generator():
    sampler = WeightedRandomSampler([1.0, 3.0, 0.0, 6.0], 20000, generator=et.Generator().manual_seed(0))
    drawn = list(sampler)
    assert len(sampler) == len(drawn) == 20000
    np.testing.assert_allclose(np.bincount(drawn, minlength=4) / 20000, [0.1, 0.3, 0.0, 0.6], atol=0.015)
    again = list(WeightedRandomSampler([1.0, 3.0, 0.0, 6.0], 20000, generator=et.Generator().manual_seed(0)))
    assert again == drawn
    unique = list(WeightedRandomSampler([1.0, 1.0, 1.0], 3, replacement=False))
    assert sorted(unique) == [0, 1, 2]


def test_weighted_sampler_in_a_dataloader_balances_classes():
    et.manual_seed(0)
    labels = et.tensor([0] * 90 + [1] * 10)
    weights = (1.0 / et.bincount(labels).double())[labels]
    loader = DataLoader(TensorDataset(et.arange(100), labels), batch_size=50,
                        sampler=WeightedRandomSampler(weights, 4000))
    seen = et.cat([y for _, y in loader])
    assert abs(seen.double().mean().item() - 0.5) < 0.05


@pytest.mark.parametrize("args", [([0.1, 0.9], "a"), ([0.1, 0.9], 0), ([0.1, 0.9], 2, 1), ([[0.1, 0.9]], 2)])
def test_weighted_sampler_errors_match_torch(args):
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    with pytest.raises(ValueError) as theirs:
        torch.utils.data.WeightedRandomSampler(*args)
    with pytest.raises(ValueError) as mine:
        WeightedRandomSampler(*args)
    assert str(mine.value) == str(theirs.value)


def test_stack_dataset_tuple_and_dict_match_torch():
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    for lib in (et, torch):
        d = lib.utils.data.StackDataset(lib.arange(3), lib.arange(3) * 2)
        assert len(d) == 3 and [int(v) for v in d[1]] == [1, 2]
        d = lib.utils.data.StackDataset(a=lib.arange(3), b=lib.arange(3) * 10)
        assert {k: int(v) for k, v in d[2].items()} == {"a": 2, "b": 20}
    with pytest.raises(ValueError) as theirs:
        torch.utils.data.StackDataset(torch.arange(3), torch.arange(4))
    with pytest.raises(ValueError) as mine:
        StackDataset(et.arange(3), et.arange(4))
    assert str(mine.value) == str(theirs.value)


class _Range(IterableDataset):
    def __init__(self, lo, hi):
        self.lo, self.hi = lo, hi

    def __iter__(self):
        return iter(range(self.lo, self.hi))

    def __len__(self):
        return self.hi - self.lo


def test_chain_dataset_and_worker_info():
    chained = ChainDataset([_Range(0, 3), _Range(10, 12)])
    assert list(chained) == [0, 1, 2, 10, 11] and len(chained) == 5
    assert get_worker_info() is None
