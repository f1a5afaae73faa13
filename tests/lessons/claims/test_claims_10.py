"""Lesson 10 (reparametrizations): its sentences about PyTorch, checked under real PyTorch 2.13."""
import importlib

import numpy as np
import pytest
from _claims import error_of, real_torch, warnings_of

torch = real_torch()
nn = torch.nn
P = torch.nn.utils.parametrize


def sigma(weight):
    return torch.linalg.matrix_norm(weight.detach(), ord=2).item()


class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)


def test_prune_is_a_submodule_to_import():
    """The lesson imports ``prune`` by name: "``torch.nn.utils.prune``" is not loaded by
    ``import torch`` alone, so ``nn.utils.prune`` needs ``import torch.nn.utils.prune`` first."""
    assert importlib.import_module("torch.nn.utils.prune").l1_unstructured


def test_pruned_weight_is_stale_between_forwards():
    """"Between two forwards that attribute is a snapshot, so it can be *stale*"."""
    prune = importlib.import_module("torch.nn.utils.prune")
    layer = nn.Linear(3, 2)
    prune.l1_unstructured(layer, "weight", amount=0.5)
    with torch.no_grad():
        layer.weight_orig.fill_(1.0)
    assert not torch.equal(layer.weight, layer.weight_orig * layer.weight_mask)
    layer(torch.zeros(1, 3))
    assert torch.equal(layer.weight, layer.weight_mask)


def test_register_parametrization_moves_the_original_and_makes_a_property():
    """"moves the parameter into ``module.parametrizations.weight.original``"; "turns ``weight``
    into a Python **property**"; "gives this one module a class of its own, ``ParametrizedLinear``,
    a subclass of ``Linear`` ... (it is still an ``nn.Linear``)"."""
    layer, other = nn.Linear(3, 3), nn.Linear(3, 3)
    original = layer.weight
    P.register_parametrization(layer, "weight", Symmetric())
    assert layer.parametrizations.weight.original is original
    assert isinstance(type(layer).__dict__["weight"], property)
    assert type(layer).__name__ == "ParametrizedLinear" and isinstance(layer, nn.Linear)
    assert type(other) is nn.Linear
    assert "weight" not in dict(layer.named_parameters()) and "weight" not in layer.state_dict()


def test_every_read_computes_the_weight_never_stale():
    """"*every read* of ``module.weight`` computes ``P(original)`` — it is never stale"."""
    layer = P.register_parametrization(nn.Linear(3, 3), "weight", Symmetric())
    with torch.no_grad():
        layer.parametrizations.weight.original.fill_(2.0)
    assert torch.equal(layer.weight, torch.full((3, 3), 2.0))
    assert layer.weight is not layer.weight


def test_training_keeps_the_weight_symmetric_and_lower_triangle_grad_is_zero():
    """"Its lower triangle is never used, so its gradient there is 0; the weight stays symmetric
    after every step"."""
    torch.manual_seed(0)
    layer = P.register_parametrization(nn.Linear(3, 3), "weight", Symmetric())
    optimizer = torch.optim.SGD(layer.parameters(), lr=0.1)
    for _ in range(3):
        optimizer.zero_grad()
        layer(torch.randn(4, 3)).pow(2).sum().backward()
        optimizer.step()
        assert torch.equal(layer.weight, layer.weight.T)
    grad = layer.parametrizations.weight.original.grad
    assert torch.equal(grad.tril(-1), torch.zeros(3, 3))


def test_assigning_without_right_inverse_raises():
    """"``Symmetric`` has no ``right_inverse``": assigning ``layer.weight = A`` then fails."""
    layer = P.register_parametrization(nn.Linear(3, 3), "weight", Symmetric())
    error = error_of(setattr, layer, "weight", torch.eye(3))
    assert isinstance(error, RuntimeError) and "does not implement right_inverse" in str(error)


def test_right_inverse_is_used_at_registration_and_on_assignment():
    """"the original becomes ``right_inverse(weight)``" at registration; on assignment it is stored
    "into the same ``Parameter`` object, so an optimizer holding it keeps working"."""
    class Sym(Symmetric):
        def right_inverse(self, A):
            return A.triu()

    layer = nn.Linear(3, 3)
    with torch.no_grad():
        layer.weight.copy_(layer.weight + layer.weight.T)
    before = layer.weight.detach().clone()
    P.register_parametrization(layer, "weight", Sym())
    original = layer.parametrizations.weight.original
    assert torch.equal(original, before.triu()) and torch.allclose(layer.weight, before)
    A = torch.ones(3, 3)
    layer.weight = A
    assert layer.parametrizations.weight.original is original and torch.equal(layer.weight, A)


def test_second_parametrization_composes():
    """"Registering a second parametrization on the same tensor appends it ...: the weight becomes
    ``P2(P1(original))``"."""
    class Double(nn.Module):
        def forward(self, X):
            return 2 * X

    layer = nn.Linear(3, 3)
    P.register_parametrization(layer, "weight", Symmetric())
    P.register_parametrization(layer, "weight", Double())
    original = layer.parametrizations.weight.original
    assert len(layer.parametrizations.weight) == 2
    assert torch.equal(layer.weight, 2 * Symmetric()(original))


def test_log_of_a_negative_number_is_nan():
    """"the log of a negative number is ``nan``"."""
    assert torch.tensor(-1.0).log().isnan()


def test_old_weight_norm_is_deprecated_and_has_g_and_v():
    """"In PyTorch 2.13 it is **deprecated** and warns"; "the parameters ``weight_g`` (shape
    ``(out, 1)``: one length per row) and ``weight_v``, and a forward pre-hook"."""
    layer, caught = warnings_of(nn.utils.weight_norm, nn.Linear(4, 3))
    assert any(category is FutureWarning and "deprecated" in message for category, message in caught)
    assert [name for name, _ in layer.named_parameters()] == ["bias", "weight_g", "weight_v"]
    assert layer.weight_g.shape == (3, 1) and len(layer._forward_pre_hooks) == 1
    assert "weight" not in layer._parameters


def test_new_weight_norm_has_two_originals_and_loads_old_checkpoints():
    """"``right_inverse`` splits the weight into ``original0`` (= ``g``) and ``original1``
    (= ``v``)"; "A checkpoint of the old form still loads into the new one"."""
    torch.manual_seed(0)
    old, _ = warnings_of(nn.utils.weight_norm, nn.Linear(4, 3))
    new = nn.utils.parametrizations.weight_norm(nn.Linear(4, 3))
    assert list(new.state_dict()) == ["bias", "parametrizations.weight.original0",
                                      "parametrizations.weight.original1"]
    new.load_state_dict(old.state_dict())
    v, g = new.parametrizations.weight.original1, new.parametrizations.weight.original0
    assert torch.allclose(new.weight, g * v / v.norm(dim=1, keepdim=True))
    assert torch.allclose(new.weight, old.weight_g * old.weight_v / old.weight_v.norm(dim=1, keepdim=True))


def test_old_spectral_norm_does_not_warn_and_converges_over_forwards():
    """"In PyTorch 2.13 it does **not** warn"; "Until the first forward, ``weight`` is the
    unnormalized weight; then each forward takes one power-iteration step"; buffers ``weight_u``,
    ``weight_v``, parameter ``weight_orig``."""
    torch.manual_seed(0)
    layer, caught = warnings_of(nn.utils.spectral_norm, nn.Linear(4, 4))
    assert caught == []
    assert list(layer.state_dict()) == ["bias", "weight_orig", "weight_u", "weight_v"]
    assert torch.equal(layer.weight, layer.weight_orig)
    errors = []
    for _ in range(4):
        u = layer.weight_u.clone()
        layer(torch.zeros(1, 4))
        assert not torch.equal(u, layer.weight_u)
        errors.append(abs(sigma(layer.weight) - 1))
    assert errors[-1] < errors[0]


def test_new_spectral_norm_is_near_one_right_away_for_most_weights():
    """"runs 15 power iterations at registration, so ``σ(weight)`` is usually close to 1 right
    away — how close depends on the weight" (slow when the two largest singular values are close)."""
    sigmas = []
    for seed in range(50):
        torch.manual_seed(seed)
        sigmas.append(sigma(nn.utils.parametrizations.spectral_norm(nn.Linear(4, 4)).weight))
    assert np.median(np.abs(np.array(sigmas) - 1)) < 1e-3
    # two nearly equal singular values: 15 iterations leave sigma visibly off 1
    torch.manual_seed(0)
    layer = nn.Linear(4, 4)
    with torch.no_grad():
        layer.weight.copy_(torch.diag(torch.tensor([1.0, 0.99, 0.5, 0.1])))
    off = [abs(sigma(nn.utils.parametrizations.spectral_norm(layer_copy(layer, seed)).weight) - 1)
           for seed in range(10)]
    assert max(off) > 1e-3


def layer_copy(layer, seed):
    torch.manual_seed(seed)
    copy = nn.Linear(4, 4)
    copy.load_state_dict(layer.state_dict())
    return copy


def test_new_spectral_norm_buffers_and_power_steps_on_read():
    """"``_u`` and ``_v`` are buffers of the parametrization module itself ... so they are saved.
    In training mode *every read* of ``weight`` takes one more power-iteration step ...; in eval
    mode they stay put"."""
    layer = nn.utils.parametrizations.spectral_norm(nn.Linear(4, 4))
    assert {"parametrizations.weight.0._u", "parametrizations.weight.0._v"} <= set(layer.state_dict())
    u = layer.parametrizations.weight[0]._u
    start = torch.tensor([1.0, 0.0, 0.0, 0.0])
    with torch.no_grad():
        u.copy_(start)
    layer.weight
    assert not torch.equal(u, start)
    layer.eval()
    with torch.no_grad():
        u.copy_(start)
    layer.weight
    assert torch.equal(u, start)


def test_spectral_norm_comparison_converges_from_any_random_start():
    """The lesson's comparison: after 50 more reads in training mode (50 power-iteration steps),
    ``σ(weight)`` is 1 to ``rtol=1e-4`` whatever random vectors the iteration started from."""
    rng = np.random.default_rng(0)
    weights = [(rng.normal(size=(4, 4)).astype(np.float32), rng.normal(size=4).astype(np.float32))
               for _ in range(2)]
    weight = weights[1][0]  # the lesson's weight: singular values 1.80 and 1.58, slow to separate
    for seed in range(20):
        torch.manual_seed(seed)
        layer = nn.Linear(4, 4)
        with torch.no_grad():
            layer.weight.copy_(torch.tensor(weight))
        layer = nn.utils.parametrizations.spectral_norm(layer)
        for _ in range(50):
            layer.weight
        assert sigma(layer.weight) == pytest.approx(1.0, rel=1e-4)


def test_cached_computes_once_per_context():
    """"Inside ``with parametrize.cached():`` the first read computes it and later reads reuse that
    same tensor ...; leaving the context empties the cache"."""
    calls = []

    class Counting(Symmetric):
        def forward(self, X):
            calls.append(1)
            return super().forward(X)

    layer = P.register_parametrization(nn.Linear(3, 3), "weight", Counting())
    calls.clear()
    with P.cached():
        assert layer.weight is layer.weight
    assert len(calls) == 1
    assert layer.weight is not layer.weight


def test_orthogonal_default_map_depends_on_the_shape():
    """"For a square weight the default is ... ``orthogonal_map="matrix_exp"``"; "for a non-square
    one it is ``"householder"``"."""
    def default_map(out_features, in_features):
        layer = nn.utils.parametrizations.orthogonal(nn.Linear(in_features, out_features))
        return layer.parametrizations.weight[0].orthogonal_map.name

    assert default_map(4, 4) == "matrix_exp"
    assert default_map(3, 4) == "householder" and default_map(4, 3) == "householder"


def test_orthogonal_original_is_minus_identity_and_keeps_lengths():
    """"the original is set to ``-I``, for which ``exp(A) = I``: the original is **not** the
    weight"; "``WᵀW = I``", "``‖W x‖ = ‖x‖``", also after SGD steps; ``base`` is a buffer."""
    torch.manual_seed(0)
    layer = nn.utils.parametrizations.orthogonal(nn.Linear(4, 4))
    assert torch.equal(layer.parametrizations.weight.original, -torch.eye(4))
    assert "parametrizations.weight.0.base" in layer.state_dict()
    optimizer = torch.optim.SGD(layer.parameters(), lr=0.1)
    for _ in range(20):
        optimizer.zero_grad()
        layer(torch.randn(8, 4)).pow(2).sum().backward()
        optimizer.step()
    W = layer.weight
    assert torch.allclose(W.T @ W, torch.eye(4), atol=1e-5)
    x = torch.randn(4)
    assert torch.allclose((W @ x).norm(), x.norm(), rtol=1e-5)


def test_remove_parametrizations_reuses_the_parameter_and_refuses_false_with_two_originals():
    """"The stored ``Parameter`` object is reused ..., the ``parametrizations`` attribute goes away,
    and the module's class is ``Linear`` again. ``False`` is refused when there are several
    originals"."""
    layer = P.register_parametrization(nn.Linear(3, 3), "weight", Symmetric())
    original, derived = layer.parametrizations.weight.original, layer.weight.detach().clone()
    P.remove_parametrizations(layer, "weight", leave_parametrized=True)
    assert layer.weight is original and torch.equal(layer.weight, derived)
    assert type(layer) is nn.Linear and not hasattr(layer, "parametrizations")
    kept = P.register_parametrization(nn.Linear(3, 3), "weight", Symmetric())
    original = kept.parametrizations.weight.original.detach().clone()
    P.remove_parametrizations(kept, "weight", leave_parametrized=False)
    assert torch.equal(kept.weight, original)
    wn = nn.utils.parametrizations.weight_norm(nn.Linear(3, 3))
    assert isinstance(error_of(P.remove_parametrizations, wn, "weight", leave_parametrized=False), ValueError)


def test_old_forms_have_their_own_remove_functions_keeping_the_derived_value():
    """"``nn.utils.remove_weight_norm(module)`` and ``nn.utils.remove_spectral_norm(module)``, which
    keep the derived value"."""
    torch.manual_seed(0)
    old_wn, _ = warnings_of(nn.utils.weight_norm, nn.Linear(3, 3))
    old_sn = nn.utils.spectral_norm(nn.Linear(3, 3))
    old_sn(torch.zeros(1, 3))
    for layer, remove in ((old_wn, nn.utils.remove_weight_norm), (old_sn, nn.utils.remove_spectral_norm)):
        derived = layer.weight.detach().clone()
        warnings_of(remove, layer)
        assert sorted(layer.state_dict()) == ["bias", "weight"]
        assert torch.allclose(layer.weight, derived)
