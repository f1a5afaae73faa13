"""torch.utils.data: datasets, samplers, DataLoader, collation; errors match PyTorch."""
import collections

import numpy as np
import pytest

import edutorch as et
from edutorch.utils import data as et_data


@pytest.fixture
def torch():
    """Real PyTorch, the oracle; tests that use it skip when it is not installed."""
    return pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")


def _to_numpy(batch):
    """Nested batch -> nested Python/NumPy values, for comparing both libraries."""
    if hasattr(batch, "detach"):
        return ("tensor", str(batch.dtype), batch.detach().numpy().tolist())
    if isinstance(batch, dict):
        return {k: _to_numpy(v) for k, v in batch.items()}
    if isinstance(batch, tuple) and hasattr(batch, "_fields"):
        return (type(batch).__name__, [_to_numpy(v) for v in batch])
    if isinstance(batch, (list, tuple)):
        return (type(batch).__name__, [_to_numpy(v) for v in batch])
    return batch


def _error(fn):
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value), str(info.value)


Point = collections.namedtuple("Point", "x y")
SAMPLES = [
    [1.5, 2.5, 3.5],
    [1, 2, 3],
    [True, False],
    ["a", "b"],
    [np.array([1.0, 2.0], dtype=np.float32), np.array([3.0, 4.0], dtype=np.float32)],
    [np.float64(1.0), np.float64(2.0)],
    [(1, 2.0), (3, 4.0)],
    [[1, 2], [3, 4]],
    [{"a": 1, "b": np.array([1, 2])}, {"a": 2, "b": np.array([3, 4])}],
    [Point(1, 2.0), Point(3, 4.0)],
]


@pytest.mark.parametrize("batch", SAMPLES, ids=range(len(SAMPLES)))
def test_default_collate_matches_torch(batch, torch):
    tdata = torch.utils.data
    assert _to_numpy(et_data.default_collate(batch)) == _to_numpy(tdata.default_collate(batch))


def test_default_collate_stacks_tensors(torch):
    tdata = torch.utils.data
    out = et_data.default_collate([et.tensor([1.0, 2.0]), et.tensor([3.0, 4.0])])
    assert out.shape == (2, 2) and out.tolist() == [[1, 2], [3, 4]]
    assert _error(lambda: et_data.default_collate([[1, 2], [3]])) == _error(lambda: tdata.default_collate([[1, 2], [3]]))
    assert _error(lambda: et_data.default_collate([object()]))[0] is TypeError


def test_tensor_dataset_and_size_mismatch(torch):
    tdata = torch.utils.data
    x, y = et.arange(10).reshape(5, 2), et.arange(5)
    ds = et_data.TensorDataset(x, y)
    assert len(ds) == 5
    assert [v.tolist() for v in ds[2]] == [[4, 5], 2]
    assert _error(lambda: et_data.TensorDataset(et.zeros(3), et.zeros(4))) == \
        _error(lambda: tdata.TensorDataset(torch.zeros(3), torch.zeros(4)))


@pytest.mark.parametrize("batch_size,drop_last", [(1, False), (2, False), (3, True), (4, False), (7, True)])
def test_dataloader_batches_match_torch(batch_size, drop_last, torch):
    tdata = torch.utils.data
    x = np.arange(14, dtype=np.float32).reshape(7, 2)
    y = np.arange(7)
    ours = et_data.DataLoader(et_data.TensorDataset(et.tensor(x), et.tensor(y)), batch_size=batch_size,
                              drop_last=drop_last)
    theirs = tdata.DataLoader(tdata.TensorDataset(torch.tensor(x), torch.tensor(y)), batch_size=batch_size,
                              drop_last=drop_last)
    assert len(ours) == len(theirs)
    assert [_to_numpy(b) for b in ours] == [_to_numpy(b) for b in theirs]


def test_dataloader_over_a_list_and_batch_size_none(torch):
    tdata = torch.utils.data
    data = [(float(i), i) for i in range(5)]
    for kwargs in (dict(batch_size=2), dict(batch_size=None)):
        assert [_to_numpy(b) for b in et_data.DataLoader(data, **kwargs)] == \
            [_to_numpy(b) for b in tdata.DataLoader(data, **kwargs)]


def test_shuffle_is_a_seeded_permutation():
    ds = et_data.TensorDataset(et.arange(20))
    run = lambda seed: [b[0].tolist() for b in et_data.DataLoader(ds, batch_size=6, shuffle=True,
                                                                  generator=et.Generator().manual_seed(seed))]
    first = run(0)
    assert first == run(0) and first != run(1)
    assert sorted(sum(first, [])) == list(range(20))
    et.manual_seed(3)
    a = [b[0].tolist() for b in et_data.DataLoader(ds, batch_size=20, shuffle=True)]
    et.manual_seed(3)
    assert a == [b[0].tolist() for b in et_data.DataLoader(ds, batch_size=20, shuffle=True)]


def test_dataloader_bad_input_matches_torch(torch):
    tdata = torch.utils.data
    empty = et_data.TensorDataset(et.zeros(0, 2))
    tempty = tdata.TensorDataset(torch.zeros(0, 2))
    assert _error(lambda: et_data.DataLoader(empty, shuffle=True)) == _error(lambda: tdata.DataLoader(tempty, shuffle=True))
    ds, tds = list(range(4)), list(range(4))
    sampler = et_data.SequentialSampler(ds)
    tsampler = tdata.SequentialSampler(tds)
    assert _error(lambda: et_data.DataLoader(ds, sampler=sampler, shuffle=True)) == \
        _error(lambda: tdata.DataLoader(tds, sampler=tsampler, shuffle=True))
    bs = et_data.BatchSampler(sampler, 2, False)
    tbs = tdata.BatchSampler(tsampler, 2, False)
    assert _error(lambda: et_data.DataLoader(ds, batch_sampler=bs, batch_size=3)) == \
        _error(lambda: tdata.DataLoader(tds, batch_sampler=tbs, batch_size=3))
    assert _error(lambda: et_data.BatchSampler(sampler, 0, False)) == _error(lambda: tdata.BatchSampler(tsampler, 0, False))
    assert list(et_data.DataLoader(ds, batch_sampler=bs)) and len(et_data.DataLoader(ds, batch_sampler=bs)) == 2


def test_random_split_lengths_fractions_and_errors(torch):
    tdata = torch.utils.data
    ds = list(range(10))
    gen = et.Generator().manual_seed(0)
    parts = et_data.random_split(ds, [0.33, 0.33, 0.34], generator=gen)
    tparts = tdata.random_split(ds, [0.33, 0.33, 0.34], generator=torch.Generator().manual_seed(0))
    assert [len(p) for p in parts] == [len(p) for p in tparts]
    assert sorted(i for p in parts for i in p) == ds
    again = et_data.random_split(ds, [0.33, 0.33, 0.34], generator=et.Generator().manual_seed(0))
    assert [list(p) for p in parts] == [list(p) for p in again]
    assert [len(p) for p in et_data.random_split(ds, [7, 3])] == [7, 3]
    assert _error(lambda: et_data.random_split(ds, [5, 4])) == _error(lambda: tdata.random_split(ds, [5, 4]))


def test_subset_and_concat():
    ds = et_data.TensorDataset(et.arange(6))
    sub = et_data.Subset(ds, [4, 1])
    assert len(sub) == 2 and sub[0][0].item() == 4
    assert [b[0].tolist() for b in et_data.DataLoader(sub, batch_size=2)] == [[4, 1]]
    both = ds + sub
    assert len(both) == 8 and both[7][0].item() == 1 and both[-1][0].item() == 1


def test_random_sampler_replacement_and_num_samples():
    s = et_data.RandomSampler(range(5), replacement=True, num_samples=12, generator=et.Generator().manual_seed(0))
    drawn = list(s)
    assert len(drawn) == len(s) == 12 and all(0 <= i < 5 for i in drawn)
    s = et_data.RandomSampler(range(5), num_samples=8)
    assert len(list(s)) == 8


class _Stream:
    """Builds the same IterableDataset for either library."""

    @staticmethod
    def make(data_module, n=5):
        class Stream(data_module.IterableDataset):
            def __iter__(self):
                return iter(range(n))

        return Stream()


def test_iterable_dataset_matches_torch(torch):
    tdata = torch.utils.data
    for kwargs in (dict(batch_size=2), dict(batch_size=2, drop_last=True), dict(batch_size=None)):
        ours = et_data.DataLoader(_Stream.make(et_data), **kwargs)
        theirs = tdata.DataLoader(_Stream.make(tdata), **kwargs)
        assert [_to_numpy(b) for b in ours] == [_to_numpy(b) for b in theirs]
    for kwargs in (dict(shuffle=True), dict(sampler=[0]), dict(batch_sampler=[[0]])):
        assert _error(lambda kwargs=kwargs: et_data.DataLoader(_Stream.make(et_data), **kwargs)) == \
            _error(lambda kwargs=kwargs: tdata.DataLoader(_Stream.make(tdata), **kwargs))
    assert _error(lambda: len(et_data.DataLoader(_Stream.make(et_data), batch_size=2)))[0] is TypeError
