"""The shipped digits and the synthetic generators: shapes, dtypes, determinism, splits."""
import numpy as np
import pytest

import edutorch as et
from edutorch import datasets


def test_digits_splits():
    x_train, y_train = datasets.load_digits("train")
    x_test, y_test = datasets.load_digits("test")
    x_all, y_all = datasets.load_digits("all")
    assert x_train.shape == (1438, 64) and x_test.shape == (359, 64) and x_all.shape == (1797, 64)
    assert x_train.dtype == et.float32 and y_train.dtype == et.int64
    assert 0.0 == x_all.numpy().min() and x_all.numpy().max() == 1.0
    assert np.bincount(y_all.numpy()).tolist() == [178, 182, 177, 183, 181, 182, 181, 179, 174, 180]
    # every class is in the test split, about 20 % of it
    counts = np.bincount(y_test.numpy(), minlength=10)
    assert counts.min() >= 34 and counts.max() <= 37
    # the train and test images together are exactly the whole set
    joined = np.concatenate([x_train.numpy(), x_test.numpy()])
    assert sorted(map(bytes, joined)) == sorted(map(bytes, x_all.numpy()))


def test_digits_image_shape_and_dataset():
    x, _ = datasets.load_digits("test", flatten=False)
    assert x.shape == (359, 1, 8, 8)
    ds = datasets.load_digits("test", as_dataset=True)
    assert len(ds) == 359 and ds[0][0].shape == (64,)
    with pytest.raises(ValueError, match="split must be"):
        datasets.load_digits("valid")


@pytest.mark.parametrize("make", [datasets.make_spirals, datasets.make_moons, datasets.make_blobs])
def test_classification_generators(make):
    x, y = make(n_samples=120)
    assert x.shape == (120, 2) and x.dtype == et.float32 and y.dtype == et.int64
    x2, y2 = make(n_samples=120)
    np.testing.assert_array_equal(x.numpy(), x2.numpy())
    np.testing.assert_array_equal(y.numpy(), y2.numpy())
    x3, _ = make(n_samples=120, seed=1)
    assert not np.array_equal(x.numpy(), x3.numpy())
    assert set(np.unique(y.numpy())) == set(range(int(y.numpy().max()) + 1))


def test_spirals_classes_and_regression():
    _, y = datasets.make_spirals(n_samples=90, n_classes=3)
    assert np.bincount(y.numpy()).tolist() == [30, 30, 30]
    x, y = datasets.make_regression(n_samples=500, n_features=3, noise=0.0, seed=4)
    w, b = datasets.regression_true_weights(3, seed=4)
    assert x.shape == (500, 3) and y.shape == (500, 1)
    np.testing.assert_allclose(y.numpy(), x.numpy() @ w.numpy() + b, rtol=1e-5, atol=1e-5)
