"""``torch.testing``: ``assert_close`` (and the deprecated ``assert_allclose``) for tests.

    torch.testing.assert_close(actual, expected)   # AssertionError with a report if not close
"""
import warnings

from ._comparison import assert_close, default_tolerances

__all__ = ["assert_allclose", "assert_close"]


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """Deprecated since PyTorch 1.12: ``assert_close`` with looser defaults, NaNs equal, dtypes not checked.

    A non-tensor ``actual`` becomes a tensor; a non-tensor ``expected`` one of ``actual``'s dtype.
    """
    from .. import _dtype, tensor
    from .._tensor import Tensor

    warnings.warn("`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a future "
                  "release. Please use `torch.testing.assert_close()` instead. You can find detailed upgrade "
                  "instructions in https://github.com/pytorch/pytorch/issues/61844.", FutureWarning, stacklevel=2)
    if not isinstance(actual, Tensor):
        actual = tensor(actual)
    if not isinstance(expected, Tensor):
        expected = tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        rtol, atol = default_tolerances(actual.dtype, expected.dtype, dtype_precisions={
            _dtype.float16: (1e-3, 1e-3), _dtype.float32: (1e-4, 1e-5), _dtype.float64: (1e-5, 1e-8)})
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=True,
                 check_dtype=False, check_stride=False, msg=msg or None)


from .._scope import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr("torch.testing", "edutorch.testing")  # out-of-scope names say why
