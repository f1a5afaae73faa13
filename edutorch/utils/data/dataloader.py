"""``torch.utils.data.DataLoader``: iterate over a dataset in (shuffled) batches.

One epoch::

    for indices in batch_sampler:                     # e.g. [17, 3, 42, ...]
        batch = collate_fn([dataset[i] for i in indices])
        yield batch

``shuffle=True`` uses a ``RandomSampler`` (a new permutation each epoch,
drawn from ``generator`` or the global RNG). Everything runs in the main
process: ``num_workers`` is accepted for compatibility only.
"""
import warnings

from ... import backend
from ._utils.collate import default_collate, default_convert
from .dataset import IterableDataset, _is_tensor_dataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler

__all__ = ["DataLoader", "default_collate", "default_convert"]


class DataLoader:
    """Combine a dataset and a sampler; iterate over batches."""

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None,
                 persistent_workers=False, pin_memory_device="", in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if isinstance(dataset, IterableDataset):
            # the dataset decides the order itself: no sampler can index into it
            for name, value in (("shuffle", shuffle), ("sampler", sampler), ("batch_sampler", batch_sampler)):
                if value not in (None, False):
                    raise ValueError(
                        f"DataLoader with IterableDataset: expected unspecified {name} option, but got {name}={value}"
                    )
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and drop_last"
                )
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError(
                "batch_size=None option disables auto-batching and is mutually exclusive with drop_last"
            )
        if sampler is None and isinstance(dataset, IterableDataset):
            sampler = _StreamSampler()
        elif sampler is None:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.dataset = dataset
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.num_workers = num_workers
        self.generator = generator
        self.pin_memory = pin_memory
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.prefetch_factor = prefetch_factor
        self.persistent_workers = persistent_workers
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    def __iter__(self):
        if self.pin_memory and not backend.cuda_is_available():
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, then "
                          "device pinned memory won't be used.", UserWarning, stacklevel=2)
        return self._batches()

    def _batches(self):
        if isinstance(self.dataset, IterableDataset):
            yield from self._iter_stream()
            return
        if not self._auto_collation:
            for index in self.sampler:
                yield self.collate_fn(self.dataset[index])
            return
        fast = self.collate_fn is default_collate and _is_tensor_dataset(self.dataset)
        for indices in self.batch_sampler:
            yield self._tensor_batch(indices) if fast else self.collate_fn(self._fetch(indices))

    def _iter_stream(self):
        """An ``IterableDataset``: take samples in the order it yields them."""
        if not self._auto_collation:
            for sample in self.dataset:
                yield self.collate_fn(sample)
            return
        batch = []
        for sample in self.dataset:
            batch.append(sample)
            if len(batch) == self.batch_size:
                yield self.collate_fn(batch)
                batch = []
        if batch and not self.drop_last:
            yield self.collate_fn(batch)

    def _fetch(self, indices):
        getitems = getattr(self.dataset, "__getitems__", None)
        if callable(getitems):
            return getitems(indices)
        return [self.dataset[i] for i in indices]

    def _tensor_batch(self, indices):
        """Fast path for a ``TensorDataset``: one fancy-indexing per tensor.

        ``stack([t[i] for i in indices])`` equals ``t[indices]``, so we skip
        building one small tensor per sample (same values, same dtypes).
        """
        return [t[indices] for t in self.dataset.tensors]

    def __len__(self):
        if isinstance(self.dataset, IterableDataset):
            n = len(self.dataset)  # a TypeError when the stream has no length, as in PyTorch
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        if self._auto_collation:
            return len(self.batch_sampler)
        return len(self.sampler)


class _StreamSampler:
    """Stands in for a sampler over an ``IterableDataset`` (it is never iterated)."""

    def __len__(self):
        raise TypeError("an IterableDataset has no sampler")
