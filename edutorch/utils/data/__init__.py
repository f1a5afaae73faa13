"""``torch.utils.data``: datasets, samplers and the DataLoader."""
from ._utils.collate import default_collate, default_convert
from .dataloader import DataLoader
from .dataset import (
    ChainDataset, ConcatDataset, Dataset, IterableDataset, StackDataset, Subset, TensorDataset, random_split,
)
from .sampler import (
    BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler, WeightedRandomSampler,
)


def get_worker_info():
    """Information about the current ``DataLoader`` worker process: always None (edutorch loads in-process)."""
    return None

__all__ = [
    "BatchSampler", "ChainDataset", "ConcatDataset", "StackDataset", "WeightedRandomSampler", "get_worker_info", "DataLoader", "Dataset", "IterableDataset", "RandomSampler", "Sampler",
    "SequentialSampler", "Subset", "SubsetRandomSampler", "TensorDataset", "default_collate",
    "default_convert", "random_split",
]


from ..._scope import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr("torch.utils.data", "edutorch.utils.data")  # out-of-scope names say why
