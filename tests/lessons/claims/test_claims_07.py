"""Lesson 07 (gradients up close): its sentences about PyTorch, checked under real PyTorch 2.13
(with PyTorch's own random weights: the lesson's numbers come from edutorch's generator)."""
import math

import numpy as np
import pytest
from _claims import error_of, real_torch, warnings_of

from edutorch.datasets import load_digits

torch = real_torch()
nn = torch.nn


@pytest.fixture(scope="module")
def batch():
    x, y = load_digits("train")
    return torch.tensor(x[:256].numpy()), torch.tensor(y[:256].numpy())


def deep_mlp(activation, depth=6, width=32):
    layers, size = [], 64
    for _ in range(depth):
        layers += [nn.Linear(size, width), activation()]
        size = width
    return nn.Sequential(*layers, nn.Linear(size, 10))


def weight_grad_norms(model, batch):
    nn.functional.cross_entropy(model(batch[0]), batch[1]).backward()
    return [m.weight.grad.norm().item() for m in model if isinstance(m, nn.Linear)]


def test_weight_gradient_is_delta_transposed_times_the_layer_input():
    """"``W_k.grad = δ_kᵀ · h_{k-1}`` where ``δ_k = ∂loss/∂z_k``"."""
    torch.manual_seed(0)
    layer, h = nn.Linear(5, 3), torch.randn(4, 5)
    z = layer(h)
    z.retain_grad()
    z.tanh().sum().backward()
    assert torch.allclose(layer.weight.grad, z.grad.T @ h, atol=1e-6)


def test_activation_derivative_bounds():
    """"``σ'(z)`` ... is at most 1/4 (at ``z = 0``)"; "Tanh's derivative ... is at most 1, and
    ReLU's is exactly 0 or 1"."""
    z = torch.linspace(-6, 6, 1201, requires_grad=True)
    for fn, bound in ((torch.sigmoid, 0.25), (torch.tanh, 1.0)):
        (grad,) = torch.autograd.grad(fn(z).sum(), z)
        assert grad.max().item() == pytest.approx(bound) and grad[600].item() == pytest.approx(bound)
    (grad,) = torch.autograd.grad(torch.relu(z).sum(), z)
    assert set(grad.unique().tolist()) == {0.0, 1.0}


def test_sigmoid_gradient_vanishes_tanh_and_relu_flow(batch):
    """The six-hidden-layer Sigmoid net: first weight's gradient "**five orders of magnitude less**"
    than the last's; Tanh and ReLU "keep flowing" (the lesson's exercise 7.2: more than 1/100)."""
    ratios = {}
    for activation in (nn.Sigmoid, nn.Tanh, nn.ReLU):
        torch.manual_seed(0)
        norms = weight_grad_norms(deep_mlp(activation), batch)
        ratios[activation] = norms[0] / norms[-1]
    assert 1e-6 < ratios[nn.Sigmoid] < 1e-4
    assert ratios[nn.Tanh] > 1e-2 and ratios[nn.ReLU] > 1e-2


def test_sigmoid_ratio_drops_about_fifty_fold_per_two_layers(batch):
    """"the ratio first/last drops by a factor of roughly 50 with every two extra layers (from about
    20 to about 130 for a single pair, depending on the seed and the depth)"."""
    averages = []
    for seed in range(4):
        ratios = []
        for depth in (2, 4, 6, 8, 10):
            torch.manual_seed(seed)
            norms = weight_grad_norms(deep_mlp(nn.Sigmoid, depth=depth), batch)
            ratios.append(norms[0] / norms[-1])
        factors = [a / b for a, b in zip(ratios, ratios[1:])]
        assert all(15 < f < 150 for f in factors), factors
        averages.append(math.exp(np.mean(np.log(factors))))
    assert all(30 < a < 80 for a in averages), averages


def exploding_net(seed=0):
    torch.manual_seed(seed)
    model = deep_mlp(nn.ReLU)
    with torch.no_grad():
        for layer in model:
            if isinstance(layer, nn.Linear):
                layer.weight.mul_(5.0)
    return model


def test_weights_times_five_make_gradients_about_ten_thousand_times_larger(batch):
    """"the gradient norms become about 10⁴ times (5⁶ ≈ 1.6·10⁴) those of the default
    initialisation"."""
    torch.manual_seed(0)
    default = weight_grad_norms(deep_mlp(nn.ReLU), batch)
    big = weight_grad_norms(exploding_net(), batch)
    ratios = np.array(big) / np.array(default)
    assert 1e3 < np.exp(np.log(ratios).mean()) < 1e5


def test_sgd_on_the_exploding_net_goes_straight_to_nan(batch):
    """"Four steps with ``lr=0.1`` (a fifth overflows float32, and the loss and the weights become
    ``nan``)"; "each step makes the loss and the gradients larger"."""
    model = exploding_net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for _ in range(5):
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(batch[0]), batch[1])
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert all(math.isfinite(v) for v in losses[:4]) and losses[0] < losses[1] < losses[2] < losses[3]
    assert math.isnan(losses[4])
    assert any(p.isnan().any() for p in model.parameters())


def test_clip_grad_norm_scales_every_grad_and_returns_the_norm_before():
    """"computes its norm, ``total_norm`` (the norm of the per-parameter norms)"; "the clip coefficient
    ``max_norm / (total_norm + 1e-6)`` ... clamps it to at most 1, and multiplies **every** ``.grad``
    by it, in place"; "**returns ``total_norm``, the norm before clipping**"."""
    torch.manual_seed(0)
    params = [nn.Parameter(torch.randn(3, 4)), nn.Parameter(torch.randn(5))]
    for p in params:
        p.grad = torch.randn_like(p) * 10
    before = [p.grad.clone() for p in params]
    grad_objects = [p.grad for p in params]
    total = nn.utils.clip_grad_norm_(params, max_norm=1.0)
    expected = torch.stack([g.norm() for g in before]).norm()
    assert torch.allclose(total, expected)
    coef = 1.0 / (expected + 1e-6)
    assert all(torch.allclose(p.grad, g * coef) and p.grad is o for p, g, o in zip(params, before, grad_objects))
    kept = [p.grad.clone() for p in params]
    nn.utils.clip_grad_norm_(params, max_norm=10.0)
    assert all(torch.equal(p.grad, k) for p, k in zip(params, kept))


def test_clip_grad_norm_inf_norm_type():
    """"``float("inf")`` (or ``"inf"``) for the largest absolute entry"."""
    for norm_type in (float("inf"), "inf"):
        w = nn.Parameter(torch.zeros(3))
        w.grad = torch.tensor([3.0, -4.0, 1.0])
        assert nn.utils.clip_grad_norm_([w], max_norm=100.0, norm_type=norm_type).item() == 4.0


def test_error_if_nonfinite():
    """"``True`` raises a ``RuntimeError``; the default ``False`` scales anyway — by
    ``max_norm / inf = 0``, which turns an ``inf`` entry into ``nan`` (``inf · 0``) and every finite
    entry into 0"."""
    w = nn.Parameter(torch.tensor([1.0, 2.0, 3.0]))
    w.grad = torch.tensor([float("inf"), 1.0, 2.0])
    error = error_of(nn.utils.clip_grad_norm_, [w], max_norm=1.0, error_if_nonfinite=True)
    assert isinstance(error, RuntimeError) and "non-finite" in str(error)
    total = nn.utils.clip_grad_norm_([w], max_norm=1.0)
    assert total.isinf() and w.grad[0].isnan() and torch.equal(w.grad[1:], torch.zeros(2))


def test_foreach_changes_the_implementation_not_the_result():
    """"``foreach``: PyTorch's implementation choice, not a change of result"; "``True`` insists and
    raises a ``RuntimeError`` where there are none"."""
    results = []
    for foreach in (None, False, True):
        w = nn.Parameter(torch.zeros(3))
        w.grad = torch.tensor([3.0, 4.0, 0.0])
        results.append((nn.utils.clip_grad_norm_([w], max_norm=1.0, foreach=foreach).item(), w.grad.tolist()))
    assert results[0] == results[1] == results[2] == (5.0, [pytest.approx(0.6), pytest.approx(0.8), 0.0])
    meta = nn.Parameter(torch.zeros(3, device="meta"))
    meta.grad = torch.zeros(3, device="meta")
    assert isinstance(error_of(nn.utils.clip_grad_norm_, [meta], 1.0, foreach=True), RuntimeError)
    nn.utils.clip_grad_norm_([meta], 1.0)  # foreach=None "silently falls back to a loop on other devices"


def test_clip_grad_value_clamps_entries_returns_none_and_turns_the_direction():
    """"clamps every gradient **entry** into ``[-clip_value, clip_value]``, in place, and returns
    ``None``"; "it changes the **direction** of the gradient"."""
    w = nn.Parameter(torch.zeros(3))
    w.grad = torch.tensor([3.0, 0.5, -0.05])
    old = w.grad.clone()
    assert nn.utils.clip_grad_value_([w], clip_value=0.1) is None
    assert torch.allclose(w.grad, torch.tensor([0.1, 0.1, -0.05]))
    assert torch.nn.functional.cosine_similarity(old, w.grad, dim=0).item() < 0.9


def test_parameters_to_vector_is_a_recorded_copy_and_vector_to_parameters_shares_memory():
    """"a **copy**, made by ``torch.cat``, so it is part of the graph (``grad_fn=CatBackward0``)";
    "The parameters stay the same ``Parameter`` objects ... but they now **share memory with
    ``vec``**"."""
    model = nn.Linear(3, 2)
    params = list(model.parameters())
    vec = nn.utils.parameters_to_vector(model.parameters())
    assert vec.grad_fn.name() == "CatBackward0" and vec.shape == (8,)
    new = torch.arange(8.0)
    nn.utils.vector_to_parameters(new, model.parameters())
    assert all(a is b for a, b in zip(params, model.parameters()))
    assert torch.equal(model.weight, torch.arange(6.0).view(2, 3))
    new[0] = 100.0
    assert model.weight[0, 0].item() == 100.0
    model.zero_grad()
    model(torch.ones(1, 3)).sum().backward()
    grads = nn.utils.parameters_to_vector(p.grad for p in model.parameters())
    assert torch.allclose(grads.norm(), nn.utils.get_total_norm([p.grad for p in model.parameters()]))


def test_a_hook_on_a_leaf_replaces_what_lands_in_grad():
    """"On a parameter (a leaf) the hook runs before the gradient is accumulated into ``.grad``, so
    what it returns is what lands in ``.grad``"; on an intermediate tensor it sees a gradient "that
    ``.grad`` never keeps"."""
    layer = nn.Linear(3, 2)
    layer.weight.register_hook(lambda g: g * torch.tensor([[0.0], [1.0]]))
    seen = []
    out = layer(torch.ones(4, 3))
    out.register_hook(lambda g: seen.append(g))
    out.sum().backward()
    assert torch.equal(layer.weight.grad[0], torch.zeros(3)) and torch.equal(layer.weight.grad[1], torch.full((3,), 4.0))
    grad, caught = warnings_of(getattr, out, "grad")  # PyTorch warns: a non-leaf keeps no .grad
    assert len(seen) == 1 and grad is None and caught


def test_a_zeroed_row_never_changes_without_weight_decay():
    """Exercise 7.5: "The first output unit's weights then never change under an optimizer without
    weight decay (decay, as in ``AdamW``, shrinks the weights themselves, past the hook)"."""
    def row_zero_moves(make_optimizer):
        torch.manual_seed(0)
        frozen = nn.Linear(4, 3)
        frozen.weight.register_hook(lambda g: g * torch.tensor([[0.0], [1.0], [1.0]]))
        optimizer = make_optimizer(frozen.parameters())
        before = frozen.weight.detach().clone()
        for _ in range(3):
            optimizer.zero_grad()
            frozen(torch.randn(8, 4)).pow(2).sum().backward()
            optimizer.step()
        assert not torch.equal(frozen.weight[1:], before[1:])
        return not torch.equal(frozen.weight[0], before[0])

    assert not row_zero_moves(lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9))
    assert not row_zero_moves(lambda p: torch.optim.Adam(p, lr=0.1))
    assert row_zero_moves(lambda p: torch.optim.AdamW(p, lr=0.1))
    assert row_zero_moves(lambda p: torch.optim.SGD(p, lr=0.1, weight_decay=0.1))
