"""Small datasets for the lessons: no download, deterministic, returned as tensors.

* synthetic 2-D problems a student can plot: ``make_spirals``, ``make_moons``,
  ``make_blobs`` (classification) and ``make_regression``;
* a real one: ``load_digits``, the UCI 8x8 handwritten digits (1797 images,
  CC BY 4.0), shipped in ``edutorch/utils/data/_datasets/digits.npz``.

Classification sets return ``(X, y)`` with float32 ``X`` and int64 ``y`` (what
``nn.CrossEntropyLoss`` expects); ``as_dataset=True`` wraps them in a
``TensorDataset`` ready for a ``DataLoader``.
"""
import os

import numpy as np

from ._creation import from_numpy
from .utils.data import TensorDataset

__all__ = ["make_spirals", "make_moons", "make_blobs", "make_regression", "regression_true_weights", "load_digits", "DIGITS_PATH"]

DIGITS_PATH = os.path.join(os.path.dirname(__file__), "utils", "data", "_datasets", "digits.npz")


def _finish(x, y, as_dataset):
    """NumPy arrays -> tensors (float32 inputs; int64 labels or float32 targets)."""
    X = from_numpy(np.ascontiguousarray(x, dtype=np.float32))
    y = from_numpy(np.ascontiguousarray(y, dtype=np.int64 if y.dtype.kind in "iu" else np.float32))
    return TensorDataset(X, y) if as_dataset else (X, y)


def make_spirals(n_samples=300, n_classes=2, noise=0.2, turns=1.5, seed=0, as_dataset=False):
    """Interleaved spiral arms, one per class: not linearly separable, good for MLP demos."""
    rng = np.random.default_rng(seed)
    y = np.arange(n_samples) % n_classes
    t = rng.uniform(0.0, 1.0, n_samples)  # position along the arm: centre (0) to tip (1)
    angle = t * turns * 2 * np.pi + y * (2 * np.pi / n_classes)
    radius = t + 0.05
    x = np.stack([radius * np.cos(angle), radius * np.sin(angle)], axis=1)
    x += rng.normal(0.0, noise * 0.1, x.shape)
    return _finish(x, y, as_dataset)


def make_moons(n_samples=200, noise=0.1, seed=0, as_dataset=False):
    """Two interleaving half circles (as in scikit-learn's ``make_moons``)."""
    rng = np.random.default_rng(seed)
    n_out = n_samples // 2
    n_in = n_samples - n_out
    outer = np.linspace(0, np.pi, n_out)
    inner = np.linspace(0, np.pi, n_in)
    x = np.concatenate([
        np.stack([np.cos(outer), np.sin(outer)], axis=1),
        np.stack([1 - np.cos(inner), 1 - np.sin(inner) - 0.5], axis=1),
    ])
    y = np.concatenate([np.zeros(n_out, dtype=np.int64), np.ones(n_in, dtype=np.int64)])
    x += rng.normal(0.0, noise, x.shape)
    order = rng.permutation(n_samples)
    return _finish(x[order], y[order], as_dataset)


def make_blobs(n_samples=200, n_classes=3, n_features=2, cluster_std=1.0, center_box=(-6.0, 6.0), seed=0,
               as_dataset=False):
    """Gaussian clusters, one per class, with random centres in ``center_box``."""
    rng = np.random.default_rng(seed)
    centers = rng.uniform(center_box[0], center_box[1], (n_classes, n_features))
    y = rng.permutation(np.arange(n_samples) % n_classes)
    x = centers[y] + rng.normal(0.0, cluster_std, (n_samples, n_features))
    return _finish(x, y, as_dataset)


def make_regression(n_samples=100, n_features=1, noise=0.1, seed=0, as_dataset=False):
    """A noisy linear target ``y = X @ w + b + noise``; returns ``(X, y)`` with ``y`` of shape (n, 1).

    ``regression_true_weights(n_features, seed)`` gives the ``(w, b)`` used.
    """
    rng = np.random.default_rng(seed)
    w, b = _regression_weights(rng, n_features)
    x = rng.uniform(-2.0, 2.0, (n_samples, n_features))
    y = x @ w + b + rng.normal(0.0, noise, (n_samples, 1))
    return _finish(x, y, as_dataset)


def _regression_weights(rng, n_features):
    return rng.normal(0.0, 2.0, (n_features, 1)), rng.normal(0.0, 1.0)


def regression_true_weights(n_features=1, seed=0):
    """The ``(w, b)`` behind ``make_regression(n_features=..., seed=...)`` (for checking a fit)."""
    w, b = _regression_weights(np.random.default_rng(seed), n_features)
    return from_numpy(w.astype(np.float32)), float(b)


def load_digits(split="train", flatten=True, as_dataset=False):
    """The UCI 8x8 handwritten digits: ``(images, labels)`` tensors.

    ``split``: ``"train"`` (1438 images), ``"test"`` (359, a fixed stratified
    20 %) or ``"all"`` (1797). Images are float32 in [0, 1] (pixel / 16),
    shaped (N, 64) with ``flatten=True`` or (N, 1, 8, 8) for conv nets;
    labels are int64 digits 0..9.
    """
    if split not in ("train", "test", "all"):
        raise ValueError(f"split must be 'train', 'test' or 'all', but got {split!r}")
    with np.load(DIGITS_PATH, allow_pickle=False) as f:
        images, labels, is_test = f["images"], f["labels"], f["is_test"].astype(bool)
    keep = slice(None) if split == "all" else (is_test if split == "test" else ~is_test)
    x = images[keep].astype(np.float32) / np.float32(16.0)
    x = x.reshape(len(x), 64) if flatten else x.reshape(len(x), 1, 8, 8)
    return _finish(x, labels[keep].astype(np.int64), as_dataset)
