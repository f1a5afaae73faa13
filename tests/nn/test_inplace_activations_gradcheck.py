"""The in-place activations' own backward formulas (they read the result, not the input),
checked against float64 central differences: no torch needed."""
import numpy as np
import pytest

import edutorch as et
import edutorch.nn.functional as F

ACTIVATIONS = {
    "leaky_relu_": lambda a: F.leaky_relu(a, 0.2, inplace=True),
    "elu_": lambda a: F.elu(a, 0.7, inplace=True),
    "silu_": lambda a: F.silu(a, inplace=True),
    "relu_": lambda a: F.relu(a, inplace=True),
}


@pytest.mark.parametrize("fn", list(ACTIVATIONS.values()), ids=list(ACTIVATIONS))
def test_inplace_activation_gradient_is_the_numerical_one(fn):
    rng = np.random.default_rng(0)
    values = rng.choice([-1.0, 1.0], (3, 4)) * rng.uniform(0.2, 1.5, (3, 4))  # away from the kink at 0
    x = et.tensor(values, requires_grad=True)
    assert et.autograd.gradcheck(lambda t: fn(t * 1), (x,))
