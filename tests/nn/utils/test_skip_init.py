"""skip_init: construct without initializing, leaving the RNG untouched."""
import numpy as np
import pytest

import edutorch as et
from edutorch.nn.utils import skip_init

from nn_utils_helpers import require_torch


def test_skip_init_builds_the_module_with_its_shapes():
    m = skip_init(et.nn.Linear, 5, 1)
    assert isinstance(m, et.nn.Linear) and m.weight.shape == (1, 5) and m.bias.shape == (1,)
    assert isinstance(m.weight, et.nn.Parameter) and m.weight.requires_grad
    m2 = skip_init(et.nn.Linear, in_features=6, out_features=1)
    assert m2.weight.shape == (1, 6)
    assert [n for n, _ in m2.named_parameters()] == ["weight", "bias"]


def test_skip_init_leaves_the_random_stream_as_if_no_init_ran():
    et.manual_seed(0)
    skip_init(et.nn.Linear, 50, 40)
    after_skip = et.rand(3).numpy().copy()
    et.manual_seed(0)
    plain = et.rand(3).numpy().copy()
    np.testing.assert_array_equal(after_skip, plain)
    et.manual_seed(0)
    et.nn.Linear(50, 40)
    assert not np.array_equal(et.rand(3).numpy(), plain)  # a normal init does draw numbers


def test_skip_init_replaces_the_initialized_values_with_empty_memory():
    class Recording(et.nn.Linear):
        """Remembers the arrays its constructor initialized."""

        def __init__(self, in_features, out_features, device=None):
            super().__init__(in_features, out_features, device=device)
            self.initialized = (self.weight.detach().numpy(), self.bias.detach().numpy())

    m = skip_init(Recording, 8, 4)
    assert m.weight.detach().numpy() is not m.initialized[0] and m.bias.detach().numpy() is not m.initialized[1]
    assert tuple(m.weight.shape) == (4, 8) and m.weight.dtype == et.float32
    assert m.weight.device == et.device("cpu")


def test_skip_init_errors_match_torch():
    torch = require_torch()

    class NoDevice(et.nn.Module):
        def __init__(self, n):
            super().__init__()

    class TNoDevice(torch.nn.Module):
        def __init__(self, n):
            super().__init__()

    with pytest.raises(RuntimeError) as got:
        skip_init(NoDevice, 3)
    with pytest.raises(RuntimeError) as want:
        torch.nn.utils.skip_init(TNoDevice, 3)
    assert str(got.value) == str(want.value) == "Module must support a 'device' arg to skip initialization"
    with pytest.raises(RuntimeError, match="Expected a Module; got <class 'int'>"):
        skip_init(int)
