"""dtypes: names, properties, PyTorch's promotion rules and the default dtype."""
import itertools

import pytest

import edutorch as et

NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]
ALIASES = {"float": "float32", "double": "float64", "half": "float16", "long": "int64", "int": "int32",
           "short": "int16"}


def test_dtype_objects_print_and_describe_themselves():
    for name in NAMES:
        d = getattr(et, name)
        assert repr(d) == f"torch.{name}"
        assert d.is_floating_point == name.startswith("float")
    for alias, name in ALIASES.items():
        assert getattr(et, alias) is getattr(et, name)
    assert et.float32.itemsize == 4 and et.int64.itemsize == 8
    assert et.get_default_dtype() is et.float32


@pytest.mark.parametrize("a,b", list(itertools.combinations_with_replacement(NAMES, 2)))
def test_promote_types_matches_torch(a, b):
    torch = pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")
    ours = et.promote_types(getattr(et, a), getattr(et, b))
    assert repr(ours) == repr(torch.promote_types(getattr(torch, a), getattr(torch, b)))


RESULT_TYPE_CASES = [
    lambda L: (L.ones(2, dtype=L.int32), 2.5),
    lambda L: (L.ones(2, dtype=L.int32), 2),
    lambda L: (L.ones(2, dtype=L.float16), 2.5),
    lambda L: (L.ones(2, dtype=L.float16), L.tensor(2.5, dtype=L.float64)),
    lambda L: (L.ones(2, dtype=L.int8), L.tensor(1000)),
    lambda L: (L.ones(2, dtype=L.uint8), L.tensor(-1, dtype=L.int8)),
    lambda L: (L.ones(2, dtype=L.bool), True),
    lambda L: (L.ones(2, dtype=L.bool), 3),
    lambda L: (L.tensor(1), L.tensor(1.0, dtype=L.float64)),
    lambda L: (L.tensor(1, dtype=L.int32), 2.0),
    lambda L: (L.ones(2, dtype=L.int64), L.ones(2, dtype=L.float16)),
]


@pytest.mark.parametrize("case", RESULT_TYPE_CASES)
def test_result_type_matches_torch(case):
    torch = pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")
    assert repr(et.result_type(*case(et))) == repr(torch.result_type(*case(torch)))
    a, b = case(et)
    ta, tb = case(torch)
    assert repr((a + b).dtype) == repr((ta + tb).dtype)


def test_set_default_dtype_changes_python_float_results():
    try:
        et.set_default_dtype(et.float64)
        assert et.tensor([1.5]).dtype == et.float64
        assert et.zeros(2).dtype == et.float64
        assert (et.tensor([1, 2]) / 2).dtype == et.float64
        assert repr(et.tensor([1.5])) == "tensor([1.5000])"
        assert repr(et.tensor([1.5], dtype=et.float32)) == "tensor([1.5000], dtype=torch.float32)"
    finally:
        et.set_default_dtype(et.float32)
    assert et.tensor([1.5]).dtype == et.float32
    with pytest.raises(TypeError, match="only floating-point types are supported as the default type"):
        et.set_default_dtype(et.int64)


def test_float32_tensor_and_python_float_stay_float32():
    x = et.ones(3)
    for out in (x + 0.1, x * 1e10, 2.5 - x, x / 3.0, x ** 2.5, et.maximum(x, et.tensor(0.5, dtype=et.float64))):
        assert out.dtype == et.float32


def test_tensor_type_strings_and_checks():
    assert et.ones(1).type() == "torch.FloatTensor"
    assert et.ones(1, dtype=et.int64).type() == "torch.LongTensor"
    assert et.ones(1).type(et.float64).dtype == et.float64
    assert et.ones(1).is_floating_point() and not et.ones(1, dtype=et.int32).is_floating_point()
    assert et.is_floating_point(et.ones(1, dtype=et.float16))
    assert et.ones(2, dtype=et.float64).element_size() == 8


def _error(lib, fn):
    try:
        fn(lib)
    except Exception as exc:
        return type(exc).__name__, str(exc)
    return None

def test_finfo_and_iinfo_match_pytorch():
    torch = pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")
    fields = ["bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"]
    for name in ("float16", "float32", "float64"):
        ours, theirs = et.finfo(getattr(et, name)), torch.finfo(getattr(torch, name))
        assert repr(ours) == repr(theirs)
        assert [getattr(ours, f) for f in fields] == [getattr(theirs, f) for f in fields]
    assert repr(et.finfo()) == repr(torch.finfo())  # the default dtype's
    for name in ("uint8", "int8", "int16", "int32", "int64"):
        ours, theirs = et.iinfo(getattr(et, name)), torch.iinfo(getattr(torch, name))
        assert repr(ours) == repr(theirs) and (ours.bits, ours.min, ours.max) == (theirs.bits, theirs.min, theirs.max)
    for make in (lambda lib: lib.finfo(lib.int32), lambda lib: lib.iinfo(lib.float32),
                 lambda lib: lib.iinfo(lib.bool), lambda lib: lib.finfo("float")):
        assert _error(et, make) == _error(torch, make)


def test_finfo_documents_float16():
    """The numbers lesson 08 teaches, without torch."""
    half = et.finfo(et.float16)
    assert (half.bits, half.max, half.eps, half.tiny) == (16, 65504.0, 2.0**-10, 2.0**-14)
    assert et.finfo(et.float32).eps == 2.0**-23 and et.finfo(et.float64).eps == 2.0**-52
    assert et.iinfo(et.int8).max == 127


def test_casting_beyond_a_dtype_range_is_silent_like_pytorch():
    """70000 does not fit in float16 (max 65504): it becomes inf without a NumPy warning."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        half = et.tensor([70000.0, -1e6, 1.0]).half()
        assert half.tolist() == [float("inf"), float("-inf"), 1.0]
        assert et.tensor([float("nan"), 1e300], dtype=et.float64).float().isnan().tolist() == [True, False]
