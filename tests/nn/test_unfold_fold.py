"""``F.unfold`` / ``F.fold`` and ``nn.Unfold`` / ``nn.Fold``: im2col and col2im, each the other's gradient.

Values, shapes, node names and error messages against real PyTorch; the
gradients (first and second order) are checked with the other layers in
``test_double_backward.py``.
"""
import numpy as np
import pytest

import edutorch as et
import edutorch.nn.functional as EF

TORCH_REASON = "real PyTorch not installed: parity test skipped"
R = np.random.default_rng(7)

# (input shape, kernel_size, dilation, padding, stride)
GEOMETRIES = [
    ((2, 3, 6, 7), 2, 1, 0, 1),
    ((2, 3, 6, 7), (3, 2), (2, 1), (1, 0), (2, 3)),
    ((3, 5, 5), 3, 1, 1, 2),                 # unbatched
    ((1, 2, 4, 4), 1, 1, 0, 1),
    ((0, 2, 5, 5), 2, 1, 1, 2),              # an empty batch
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("shape, kernel, dilation, padding, stride", GEOMETRIES)
def test_unfold_then_fold_match_torch(shape, kernel, dilation, padding, stride, dtype):
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    x_np = R.standard_normal(shape).astype(dtype)
    results = []
    for lib in (et, torch):
        x = lib.tensor(x_np, requires_grad=True)
        cols = lib.nn.functional.unfold(x, kernel, dilation, padding, stride)
        back = lib.nn.functional.fold(cols, shape[-2:], kernel, dilation, padding, stride)
        back.sum().backward()  # d(fold(unfold(x)))/dx: how many blocks read each pixel
        results.append((cols, back, x.grad, cols.grad_fn.name(), back.grad_fn.name()))
    (cols, back, gx, *names), (t_cols, t_back, t_gx, *t_names) = results
    assert names == t_names == ["Im2ColBackward0", "Col2ImBackward0"]
    for a, b in ((cols, t_cols), (back, t_back), (gx, t_gx)):
        assert tuple(a.shape) == tuple(b.shape) and str(a.dtype) == str(b.dtype)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6, atol=1e-6)


def test_modules_match_functional_and_torch_repr():
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    x_np = R.standard_normal((2, 3, 5, 6))
    ours = et.nn.Unfold(kernel_size=(2, 3), dilation=1, padding=1, stride=2)
    theirs = torch.nn.Unfold(kernel_size=(2, 3), dilation=1, padding=1, stride=2)
    assert repr(ours) == repr(theirs)
    cols = ours(et.tensor(x_np))
    np.testing.assert_allclose(cols.numpy(), theirs(torch.tensor(x_np)).numpy(), rtol=1e-12)
    fold, t_fold = et.nn.Fold((5, 6), (2, 3), padding=1, stride=2), torch.nn.Fold((5, 6), (2, 3), padding=1, stride=2)
    assert repr(fold) == repr(t_fold)
    np.testing.assert_allclose(fold(cols).numpy(), t_fold(torch.tensor(cols.numpy())).numpy(), rtol=1e-12)


ERROR_CASES = {
    "unfold_5d": lambda F, lib: F.unfold(lib.zeros(1, 2, 3, 3, 3), 2),
    "unfold_empty_channels": lambda F, lib: F.unfold(lib.zeros(1, 0, 3, 3), 2),
    "unfold_kernel_too_big": lambda F, lib: F.unfold(lib.zeros(1, 2, 3, 3), 4),
    "unfold_kernel_zero": lambda F, lib: F.unfold(lib.zeros(1, 2, 3, 3), 0),
    "unfold_stride_zero": lambda F, lib: F.unfold(lib.zeros(1, 2, 3, 3), 2, stride=0),
    "unfold_dilation_zero": lambda F, lib: F.unfold(lib.zeros(1, 2, 3, 3), 2, dilation=0),
    "unfold_negative_padding": lambda F, lib: F.unfold(lib.zeros(1, 2, 3, 3), 2, padding=-1),
    "unfold_three_kernel_sizes": lambda F, lib: F.unfold(lib.zeros(1, 2, 3, 3), (2, 2, 2)),
    "unfold_int": lambda F, lib: F.unfold(lib.zeros(1, 2, 3, 3, dtype=lib.int32), 2),
    "fold_1d": lambda F, lib: F.fold(lib.zeros(8), (4, 4), 2, stride=2),
    "fold_4d": lambda F, lib: F.fold(lib.zeros(1, 1, 8, 4), (4, 4), 2, stride=2),
    "fold_not_divisible": lambda F, lib: F.fold(lib.zeros(1, 7, 4), (4, 4), 2, stride=2),
    "fold_wrong_block_count": lambda F, lib: F.fold(lib.zeros(1, 8, 9), (4, 4), 2, stride=2),
    "fold_unbatched_wrong_block_count": lambda F, lib: F.fold(lib.zeros(8, 9), (4, 4), 2, stride=2),
    "fold_output_too_small": lambda F, lib: F.fold(lib.zeros(1, 8, 1), (1, 1), 2),
    "fold_one_padding": lambda F, lib: F.fold(lib.zeros(1, 8, 4), 4, 2, stride=2, padding=(1,)),
    "fold_int": lambda F, lib: F.fold(lib.zeros(1, 8, 4, dtype=lib.int32), (4, 4), 2, stride=2),
}


def _raised(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - comparing whatever each library raises
        return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize("name", sorted(ERROR_CASES))
def test_errors_match_torch(name):
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    ours = _raised(lambda: ERROR_CASES[name](EF, et))
    theirs = _raised(lambda: ERROR_CASES[name](torch.nn.functional, torch))
    assert theirs is not None and ours == theirs


def test_bool_columns_are_allowed_as_in_torch():
    x = et.tensor(R.standard_normal((1, 2, 3, 3)) > 0)
    cols = EF.unfold(x, 2)
    assert cols.dtype == et.bool and tuple(cols.shape) == (1, 8, 4)
    assert cols.numpy()[0, 0].tolist() == x.numpy()[0, 0, :2, :2].ravel().tolist()
