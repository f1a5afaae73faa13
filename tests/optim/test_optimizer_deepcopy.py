"""``copy.deepcopy`` of an optimizer (with the module it optimizes) steps like the original, as
PyTorch's does: the state is copied, the hooks are not (``__getstate__``/``__setstate__``)."""
import copy

import numpy as np
import pytest

import edutorch as et


def _trained(framework, name, steps):
    model = framework.nn.Linear(3, 2, dtype=framework.float64)
    with framework.no_grad():  # the same start in both frameworks
        model.weight.copy_(framework.tensor(np.arange(6.0).reshape(2, 3) / 7 - 0.3))
        model.bias.copy_(framework.tensor([0.1, -0.2], dtype=framework.float64))
    optimizer = getattr(framework.optim, name)(model.parameters(), lr=0.1)
    x = framework.tensor(np.arange(12.0).reshape(4, 3) / 10)
    for _ in range(steps):
        optimizer.zero_grad()
        model(x).pow(2).sum().backward()
        optimizer.step()
    return model, optimizer, x


@pytest.mark.parametrize("name", ["SGD", "Adam"])
def test_a_deep_copied_optimizer_steps_its_copied_parameters_like_the_original(name):
    model, optimizer, x = _trained(et, name, steps=2)
    calls = []
    optimizer.register_step_post_hook(lambda *args: calls.append(1))
    twin, twin_optimizer = copy.deepcopy((model, optimizer))
    assert twin_optimizer.param_groups[0]["params"][0] is twin.weight
    for m, o in ((model, optimizer), (twin, twin_optimizer)):
        o.zero_grad()
        m(x).pow(2).sum().backward()
        o.step()
    assert calls == [1]  # the original's hook only: hooks are not copied
    np.testing.assert_array_equal(twin.weight.detach().numpy(), model.weight.detach().numpy())
    assert twin.weight is not model.weight


def test_deepcopy_of_an_optimizer_matches_real_torch():
    torch = pytest.importorskip("torch", reason="real PyTorch is the oracle for this test")
    results = []
    for framework in (et, torch):
        model, optimizer, x = _trained(framework, "Adam", steps=2)
        twin, twin_optimizer = copy.deepcopy((model, optimizer))
        twin_optimizer.zero_grad()
        twin(x).pow(2).sum().backward()
        twin_optimizer.step()
        results.append(twin.weight.detach().numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-12)
