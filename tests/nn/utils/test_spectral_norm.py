"""Hook-based spectral_norm / remove_spectral_norm: power iteration in training only."""
import numpy as np
import pytest

import edutorch as et
from edutorch.nn.utils import remove_spectral_norm, spectral_norm

from nn_utils_helpers import pair, require_torch, to_np


def copy_uv(e, t):
    """Start edutorch's power iteration from PyTorch's random vectors."""
    e.weight_u.data = et.from_numpy(to_np(t.weight_u).copy())
    e.weight_v.data = et.from_numpy(to_np(t.weight_v).copy())


@pytest.mark.parametrize("kind,args,n_iter", [
    ("Linear", (20, 40), 1), ("Linear", (7, 3), 3), ("Conv2d", (3, 4, 3), 1),
])
def test_spectral_norm_matches_torch(kind, args, n_iter):
    torch = require_torch()
    e, t = pair(kind, *args)
    spectral_norm(e, n_power_iterations=n_iter)
    torch.nn.utils.spectral_norm(t, n_power_iterations=n_iter)
    copy_uv(e, t)
    assert [n for n, _ in e.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert [n for n, _ in e.named_buffers()] == [n for n, _ in t.named_buffers()]
    assert list(e.state_dict()) == list(t.state_dict())
    assert e.weight_u.shape == t.weight_u.shape and e.weight_v.shape == t.weight_v.shape

    shape = (2, args[0]) if kind == "Linear" else (2, args[0], 5, 5)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    for _ in range(3):  # training: u and v move a step each forward
        ye, yt = e(et.tensor(x)), t(torch.tensor(x))
        np.testing.assert_allclose(to_np(e.weight_u), to_np(t.weight_u), rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(to_np(e.weight_v), to_np(t.weight_v), rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(to_np(e.weight), to_np(t.weight), rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(to_np(ye), to_np(yt), rtol=1e-4, atol=1e-5)
    assert e.weight.grad_fn.name() == t.weight.grad_fn.name() == "DivBackward0"
    (ye ** 2).sum().backward()
    (yt ** 2).sum().backward()
    np.testing.assert_allclose(e.weight_orig.grad.numpy(), t.weight_orig.grad.numpy(), rtol=1e-3, atol=1e-5)

    e.eval()
    t.eval()
    u_before = to_np(e.weight_u).copy()
    ye, yt = e(et.tensor(x)), t(torch.tensor(x))
    np.testing.assert_array_equal(to_np(e.weight_u), u_before)  # frozen in eval
    np.testing.assert_allclose(to_np(ye), to_np(yt), rtol=1e-4, atol=1e-5)

    remove_spectral_norm(e)
    torch.nn.utils.remove_spectral_norm(t)
    assert list(e.state_dict()) == list(t.state_dict())
    np.testing.assert_allclose(to_np(e.weight), to_np(t.weight), rtol=1e-4, atol=1e-6)


def test_sigma_converges_to_the_largest_singular_value():
    e, _ = pair("Linear", 6, 5)
    w = to_np(e.weight).copy()
    spectral_norm(e, n_power_iterations=50)
    e(et.randn(1, 6))
    sigma = np.linalg.svd(w, compute_uv=False)[0]
    np.testing.assert_allclose(to_np(e.weight), w / sigma, rtol=1e-4, atol=1e-6)


def test_backward_through_two_forwards():
    """The GAN pattern D(real) - D(fake): u, v change in place between the forwards."""
    e, _ = pair("Linear", 4, 3)
    spectral_norm(e)
    loss = e(et.randn(2, 4)).sum() - e(et.randn(2, 4)).sum()
    loss.backward()
    assert e.weight_orig.grad is not None


def test_spectral_norm_errors_match_torch():
    torch = require_torch()
    e, t = pair("Linear", 3, 2)
    for fn, mod in ((spectral_norm, e), (torch.nn.utils.spectral_norm, t)):
        fn(mod)
    msgs = []
    for fn, mod in ((spectral_norm, e), (torch.nn.utils.spectral_norm, t)):
        with pytest.raises(RuntimeError) as info:
            fn(mod)
        msgs.append(str(info.value))
    for fn, mod in ((remove_spectral_norm, e), (torch.nn.utils.remove_spectral_norm, t)):
        with pytest.raises(ValueError) as info:
            fn(mod, "bias")
        msgs.append(str(info.value))
    for fn, mod in ((spectral_norm, pair("Linear", 3, 2)[0]), (torch.nn.utils.spectral_norm, t)):
        with pytest.raises(ValueError) as info:
            fn(mod, "bias", n_power_iterations=0)
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1] and msgs[2] == msgs[3] and msgs[4] == msgs[5]
