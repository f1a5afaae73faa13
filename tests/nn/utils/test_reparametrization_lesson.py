"""What lesson 10 (reparametrizations) shows about PyTorch 2.13, checked in both libraries.

Each test runs the same code on edutorch and on real PyTorch and compares what
the lesson prints: state_dict keys, which tensor objects are kept, when power
iteration runs, the warnings of the old forms.
"""
import importlib
import warnings

import numpy as np
import pytest

import edutorch as et

from nn_utils_helpers import require_torch


def libraries():
    return [et, require_torch()]


def utils_of(lib):
    return lib.nn.utils, importlib.import_module(lib.__name__ + ".nn.utils.parametrize")


def symmetric(lib):
    class Symmetric(lib.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

    return Symmetric()


def keys_of_every_form(lib):
    utils, P = utils_of(lib)
    nn = lib.nn
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        old_wn = utils.weight_norm(nn.Linear(4, 3))
    forms = {
        "old weight_norm": old_wn,
        "old spectral_norm": utils.spectral_norm(nn.Linear(4, 3)),
        "weight_norm": utils.parametrizations.weight_norm(nn.Linear(4, 3)),
        "spectral_norm": utils.parametrizations.spectral_norm(nn.Linear(4, 3)),
        "orthogonal": utils.parametrizations.orthogonal(nn.Linear(4, 4)),
        "symmetric": P.register_parametrization(nn.Linear(3, 3), "weight", symmetric(lib)),
        "pruned": importlib.import_module(lib.__name__ + ".nn.utils.prune").l1_unstructured(
            nn.Linear(3, 2), "weight", amount=0.5),
    }
    return {name: (list(m.state_dict().keys()), [n for n, _ in m.named_parameters()],
                   [n for n, _ in m.named_buffers()], type(m).__name__)
            for name, m in forms.items()}


def test_state_dict_parameters_buffers_and_class_of_every_form_match_torch():
    ours, theirs = (keys_of_every_form(lib) for lib in libraries())
    assert ours == theirs
    assert ours["spectral_norm"][0] == ["bias", "parametrizations.weight.original",
                                        "parametrizations.weight.0._u", "parametrizations.weight.0._v"]


def test_old_weight_norm_warns_old_spectral_norm_does_not():
    for lib in libraries():
        utils, _ = utils_of(lib)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            utils.spectral_norm(lib.nn.Linear(2, 2))
            utils.weight_norm(lib.nn.Linear(2, 2))
        assert [(w.category, str(w.message)) for w in caught] == [(
            FutureWarning, "`torch.nn.utils.weight_norm` is deprecated in favor of "
                           "`torch.nn.utils.parametrizations.weight_norm`.")]


def test_a_pruned_weight_is_stale_until_a_forward_a_parametrized_weight_never_is():
    for lib in libraries():
        _, P = utils_of(lib)
        prune = importlib.import_module(lib.__name__ + ".nn.utils.prune")
        pruned = prune.l1_unstructured(lib.nn.Linear(3, 2), "weight", amount=0.5)
        before = pruned.weight.detach().clone()
        with lib.no_grad():
            pruned.weight_orig.fill_(1.0)
        assert lib.equal(pruned.weight, before)  # the pre-hook has not run yet
        pruned(lib.zeros(1, 3))
        assert lib.equal(pruned.weight, pruned.weight_mask)  # 1 * mask
        sym = P.register_parametrization(lib.nn.Linear(3, 3), "weight", symmetric(lib))
        with lib.no_grad():
            sym.parametrizations.weight.original.copy_(lib.arange(9.0).reshape(3, 3))
        assert sym.weight.tolist() == [[0.0, 1.0, 2.0], [1.0, 4.0, 5.0], [2.0, 5.0, 8.0]]


def test_a_read_of_a_spectral_norm_weight_moves_u_in_train_mode_only():
    for lib in libraries():
        utils, _ = utils_of(lib)
        layer = utils.parametrizations.spectral_norm(lib.nn.Linear(4, 4))
        sigma = np.linalg.svd(layer.weight.detach().numpy(), compute_uv=False)[0]
        assert sigma == pytest.approx(1.0, abs=1e-3)  # 15 iterations at registration
        u = layer.parametrizations.weight[0]._u
        start = lib.tensor([1.0, 0.0, 0.0, 0.0])  # not converged: a step must move it
        with lib.no_grad():
            u.copy_(start)
        layer.weight  # noqa: B018
        assert not lib.equal(u, start)
        layer.eval()
        with lib.no_grad():
            u.copy_(start)
        layer.weight  # noqa: B018
        assert lib.equal(u, start)


def test_orthogonal_original_is_minus_identity_and_the_weight_is_base():
    for lib in libraries():
        utils, _ = utils_of(lib)
        layer = utils.parametrizations.orthogonal(lib.nn.Linear(4, 4))
        np.testing.assert_array_equal(layer.parametrizations.weight.original.detach().numpy(),
                                      -np.eye(4, dtype=np.float32))
        np.testing.assert_allclose(layer.weight.detach().numpy(),
                                   layer.parametrizations.weight[0].base.numpy(), atol=1e-6)


def test_cached_reuses_one_tensor_and_remove_keeps_the_parameter_object():
    for lib in libraries():
        _, P = utils_of(lib)
        layer = P.register_parametrization(lib.nn.Linear(3, 3), "weight", symmetric(lib))
        assert layer.weight is not layer.weight
        with P.cached():
            assert layer.weight is layer.weight
        stored = layer.parametrizations.weight.original
        derived = layer.weight.detach().clone()
        P.remove_parametrizations(layer, "weight", leave_parametrized=True)
        assert layer.weight is stored and lib.equal(layer.weight, derived)
        assert type(layer) is lib.nn.Linear and not hasattr(layer, "parametrizations")
