"""torch.nn.utils.prune: masks, reparametrisation, iterative and global pruning, errors.

Parity tests build the same layer in edutorch and in PyTorch with identical
weights and compare masks, module keys, forward outputs and gradients.
"""
import math

import numpy as np
import pytest

import edutorch as et
from edutorch.nn.utils import prune

from nn_utils_helpers import numerical_grad, pair, require_torch, to_np


def torch_prune():
    require_torch()
    from torch.nn.utils import prune as tprune

    return tprune


def keys(module):
    return (
        [n for n, _ in module.named_parameters()],
        [n for n, _ in module.named_buffers()],
        list(module.state_dict().keys()),
    )


# -- deterministic masks match PyTorch exactly ---------------------------------------
@pytest.mark.parametrize("amount", [0.0, 0.3, 0.5, 1.0, 0, 7, 20])
def test_l1_unstructured_mask_matches_torch(amount):
    tprune = torch_prune()
    e, t = pair("Linear", 5, 4)
    prune.l1_unstructured(e, "weight", amount=amount)
    tprune.l1_unstructured(t, "weight", amount=amount)
    np.testing.assert_array_equal(to_np(e.weight_mask), to_np(t.weight_mask))
    np.testing.assert_array_equal(to_np(e.weight), to_np(t.weight))
    assert e.weight_mask.dtype == et.float32


@pytest.mark.parametrize("n", [1, 2, float("inf"), float("-inf"), "fro", 0.5])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_ln_structured_mask_matches_torch(n, dim):
    tprune = torch_prune()
    e, t = pair("Linear", 6, 5)
    prune.ln_structured(e, "weight", amount=0.4, n=n, dim=dim)
    tprune.ln_structured(t, "weight", amount=0.4, n=n, dim=dim)
    np.testing.assert_array_equal(to_np(e.weight_mask), to_np(t.weight_mask))


@pytest.mark.parametrize("dim", [0, 1, 3])
def test_ln_structured_on_conv_weight(dim):
    tprune = torch_prune()
    e, t = pair("Conv2d", 3, 5, 3)
    prune.ln_structured(e, "weight", amount=2, n=2, dim=dim)
    tprune.ln_structured(t, "weight", amount=2, n=2, dim=dim)
    np.testing.assert_array_equal(to_np(e.weight_mask), to_np(t.weight_mask))


def test_importance_scores_drive_the_mask():
    tprune = torch_prune()
    torch = require_torch()
    e, t = pair("Linear", 4, 3)
    scores = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
    prune.l1_unstructured(e, "weight", amount=5, importance_scores=et.tensor(scores))
    tprune.l1_unstructured(t, "weight", amount=5, importance_scores=torch.tensor(scores))
    np.testing.assert_array_equal(to_np(e.weight_mask), to_np(t.weight_mask))
    prune.ln_structured(e, "weight", amount=1, n=1, dim=1, importance_scores=et.tensor(scores))
    tprune.ln_structured(t, "weight", amount=1, n=1, dim=1, importance_scores=torch.tensor(scores))
    np.testing.assert_array_equal(to_np(e.weight_mask), to_np(t.weight_mask))


def test_ties_prune_the_right_count_lowest_index_first():
    tprune = torch_prune()
    torch = require_torch()
    e, t = pair("Linear", 4, 3)
    with et.no_grad():
        e.weight.fill_(1.0)
    with torch.no_grad():
        t.weight.fill_(1.0)
    prune.l1_unstructured(e, "weight", amount=5)
    tprune.l1_unstructured(t, "weight", amount=5)
    # same count as PyTorch; which tied entries go is documented: lowest index first
    assert int((e.weight_mask == 0).sum()) == int((t.weight_mask == 0).sum()) == 5
    np.testing.assert_array_equal(to_np(e.weight_mask).reshape(-1), [0] * 5 + [1] * 7)


# -- random methods: counts and structure ----------------------------------------------
def test_random_unstructured_prunes_the_right_count():
    e, _ = pair("Linear", 10, 8)
    prune.random_unstructured(e, "weight", amount=0.25)
    assert int((e.weight_mask == 0).sum()) == 20
    prune.random_unstructured(e, "weight", amount=7)  # 7 more among the 60 left
    assert int((e.weight_mask == 0).sum()) == 27


def test_random_unstructured_follows_the_seed():
    a, _ = pair("Linear", 10, 8)
    b, _ = pair("Linear", 10, 8)
    et.manual_seed(3)
    prune.random_unstructured(a, "weight", amount=0.5)
    et.manual_seed(3)
    prune.random_unstructured(b, "weight", amount=0.5)
    np.testing.assert_array_equal(to_np(a.weight_mask), to_np(b.weight_mask))


def test_random_structured_prunes_whole_channels():
    e, _ = pair("Linear", 5, 3)
    prune.random_structured(e, "weight", amount=3, dim=1)
    columns_pruned = int(((e.weight_mask.numpy() == 0).all(axis=0)).sum())
    assert columns_pruned == 3
    assert int((e.weight_mask == 0).sum()) == 9
    np.testing.assert_array_equal(to_np(e.weight)[:, to_np(e.weight_mask)[0] == 0], 0)


# -- reparametrisation ------------------------------------------------------------------
def test_keys_before_prune_after_prune_and_after_remove_match_torch():
    tprune = torch_prune()
    e, t = pair("Linear", 4, 3)
    assert keys(e) == keys(t)
    prune.l1_unstructured(e, "weight", amount=0.5)
    tprune.l1_unstructured(t, "weight", amount=0.5)
    prune.random_unstructured(e, "bias", amount=1)
    tprune.random_unstructured(t, "bias", amount=1)
    assert keys(e) == keys(t) == (
        ["weight_orig", "bias_orig"], ["weight_mask", "bias_mask"],
        ["weight_orig", "bias_orig", "weight_mask", "bias_mask"],
    )
    prune.remove(e, "weight")
    tprune.remove(t, "weight")
    assert keys(e) == keys(t)
    assert isinstance(e.weight, et.nn.Parameter)
    np.testing.assert_array_equal(to_np(e.weight), to_np(t.weight))


def test_orig_is_the_same_parameter_object_and_mask_a_buffer():
    e, _ = pair("Linear", 4, 3)
    w = e.weight
    prune.l1_unstructured(e, "weight", amount=0.5)
    assert e.weight_orig is w
    assert "weight" not in e._parameters and "weight_mask" in e._buffers
    assert e.weight.grad_fn.name() == "MulBackward0"
    prune.remove(e, "weight")
    assert e.weight is w and w.requires_grad and w.grad_fn is None


def test_forward_and_gradients_of_orig_match_torch():
    tprune = torch_prune()
    torch = require_torch()
    e, t = pair("Linear", 6, 4)
    prune.l1_unstructured(e, "weight", amount=0.5)
    tprune.l1_unstructured(t, "weight", amount=0.5)
    x = np.random.default_rng(0).standard_normal((3, 6)).astype(np.float32)
    ye, yt = e(et.tensor(x)), t(torch.tensor(x))
    np.testing.assert_allclose(to_np(ye), to_np(yt), rtol=1e-5, atol=1e-6)
    (ye ** 2).sum().backward()
    (yt ** 2).sum().backward()
    np.testing.assert_allclose(e.weight_orig.grad.numpy(), t.weight_orig.grad.numpy(), rtol=1e-5, atol=1e-6)
    assert (e.weight_orig.grad.numpy()[to_np(e.weight_mask) == 0] == 0).all()


def test_hook_recomputes_weight_after_orig_changes():
    e, _ = pair("Linear", 4, 3)
    prune.l1_unstructured(e, "weight", amount=6)
    with et.no_grad():
        e.weight_orig.fill_(2.0)
    e(et.randn(1, 4))  # the forward pre-hook runs apply_mask
    np.testing.assert_array_equal(to_np(e.weight), 2.0 * to_np(e.weight_mask))
    hooks = list(e._forward_pre_hooks.values())
    assert len(hooks) == 1 and isinstance(hooks[0], prune.L1Unstructured)


def test_apply_mask_gradient_is_the_mask_float64():
    rng = np.random.default_rng(2)
    mask = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]])
    r = et.tensor(rng.standard_normal((2, 3)))
    module = et.nn.Module()
    module.weight = et.nn.Parameter(et.tensor(rng.standard_normal((2, 3))))
    prune.custom_from_mask(module, "weight", et.tensor(mask, dtype=et.float64))
    (module.weight * r).sum().backward()

    hook = next(iter(module._forward_pre_hooks.values()))

    def loss():
        with et.no_grad():
            return float((hook.apply_mask(module) * r).sum().item())

    numeric = numerical_grad(loss, module.weight_orig.detach().numpy())
    np.testing.assert_allclose(module.weight_orig.grad.numpy(), numeric, atol=1e-7)
    np.testing.assert_allclose(module.weight_orig.grad.numpy(), mask * r.numpy())


# -- iterative and global pruning -------------------------------------------------------
def test_iterative_pruning_matches_torch_and_builds_a_container():
    tprune = torch_prune()
    e, t = pair("Conv2d", 2, 6, 3)
    for mod, pr in ((e, prune), (t, tprune)):
        pr.l1_unstructured(mod, "weight", amount=0.3)
        pr.ln_structured(mod, "weight", amount=2, n=2, dim=0)
        pr.l1_unstructured(mod, "weight", amount=10)
        pr.ln_structured(mod, "weight", amount=0.25, n=1, dim=1)
    np.testing.assert_array_equal(to_np(e.weight_mask), to_np(t.weight_mask))
    hook = next(iter(e._forward_pre_hooks.values()))
    assert isinstance(hook, prune.PruningContainer) and len(hook) == 4
    assert [type(m).__name__ for m in hook] == [type(m).__name__ for m in next(iter(t._forward_pre_hooks.values()))]
    assert int((e.weight_mask == 0).sum()) == int((t.weight_mask == 0).sum())


def test_iterative_l1_acts_only_on_unpruned_entries():
    e, _ = pair("Linear", 5, 4)
    prune.l1_unstructured(e, "weight", amount=0.5)  # 10 of 20
    prune.l1_unstructured(e, "weight", amount=0.5)  # 5 of the 10 left
    assert int((e.weight_mask == 0).sum()) == 15


def test_global_unstructured_matches_torch():
    tprune = torch_prune()
    e1, t1 = pair("Linear", 10, 4)
    e2, t2 = pair("Linear", 4, 3)
    prune.l1_unstructured(e2, "weight", amount=2)
    tprune.l1_unstructured(t2, "weight", amount=2)
    prune.global_unstructured([(e1, "weight"), (e2, "weight"), (e2, "bias")],
                              pruning_method=prune.L1Unstructured, amount=0.4)
    tprune.global_unstructured([(t1, "weight"), (t2, "weight"), (t2, "bias")],
                               pruning_method=tprune.L1Unstructured, amount=0.4)
    for e, t in ((e1, t1), (e2, t2)):
        np.testing.assert_array_equal(to_np(e.weight_mask), to_np(t.weight_mask))
    np.testing.assert_array_equal(to_np(e2.bias_mask), to_np(t2.bias_mask))
    # 40% of the 55 entries, counting the 2 pruned before: the earlier mask is respected
    total = sum(int((m == 0).sum()) for m in (e1.weight_mask, e2.weight_mask, e2.bias_mask))
    assert total == 2 + round(0.4 * (55 - 2))
    assert isinstance(next(iter(e1._forward_pre_hooks.values())), prune.CustomFromMask)


def test_global_unstructured_twice_on_fresh_weights_matches_torch():
    """The first global pruning ranks the whole vector (all entries alive: no gather); the
    second gathers the entries still alive."""
    tprune = torch_prune()
    e1, t1 = pair("Linear", 10, 4)
    e2, t2 = pair("Linear", 4, 3)
    for amount in (0.3, 0.5):
        prune.global_unstructured([(e1, "weight"), (e2, "weight")],
                                  pruning_method=prune.L1Unstructured, amount=amount)
        tprune.global_unstructured([(t1, "weight"), (t2, "weight")],
                                   pruning_method=tprune.L1Unstructured, amount=amount)
        for e, t in ((e1, t1), (e2, t2)):
            np.testing.assert_array_equal(to_np(e.weight_mask), to_np(t.weight_mask))
            np.testing.assert_array_equal(to_np(e.weight), to_np(t.weight))
    # 52 entries: round(0.3 * 52) = 16, then half of the 36 left
    assert sum(int((m == 0).sum()) for m in (e1.weight_mask, e2.weight_mask)) == 16 + 18
    for e in (e1, e2):  # each mask owns its memory: it can be written, as in PyTorch
        assert e.weight_mask.dtype == et.float32 and e.weight_mask.is_contiguous()
        e.weight_mask[0, 0] = 1.0


def test_a_method_that_writes_into_its_default_mask_works_in_global_pruning():
    """PyTorch hands the method a real tensor of ones: writing into it is allowed."""
    class EveryOther(prune.BasePruningMethod):
        PRUNING_TYPE = "unstructured"

        def __init__(self, amount):
            self.amount = amount

        def compute_mask(self, t, default_mask):
            default_mask.view(-1)[::2] = 0
            return default_mask

    a, b = et.nn.Linear(3, 2), et.nn.Linear(2, 2)
    prune.global_unstructured([(a, "weight"), (b, "weight")], pruning_method=EveryOther,
                              amount=0.5)
    assert to_np(a.weight_mask).tolist() == [[0.0, 1.0, 0.0], [1.0, 0.0, 1.0]]
    assert to_np(b.weight_mask).tolist() == [[0.0, 1.0], [0.0, 1.0]]


def test_ties_across_tensors_in_global_pruning_go_lowest_index_first():
    w1, w2 = et.nn.Linear(3, 1, bias=False), et.nn.Linear(3, 1, bias=False)
    with et.no_grad():
        w1.weight.copy_(et.tensor([[2.0, 1.0, 1.0]]))
        w2.weight.copy_(et.tensor([[1.0, 3.0, 1.0]]))
    prune.global_unstructured([(w1, "weight"), (w2, "weight")],
                              pruning_method=prune.L1Unstructured, amount=3)
    # four entries tie at 1.0 for three slots: the first three in the concatenated order
    assert to_np(w1.weight_mask).tolist() == [[1.0, 0.0, 0.0]]
    assert to_np(w2.weight_mask).tolist() == [[0.0, 1.0, 1.0]]


def test_global_unstructured_rejects_structured_methods():
    e, _ = pair("Linear", 4, 3)
    with pytest.raises(TypeError, match='Only "unstructured" PRUNING_TYPE supported'):
        prune.global_unstructured([(e, "weight")], pruning_method=prune.RandomStructured, amount=1)
    with pytest.raises(TypeError, match="parameters is not an Iterable"):
        prune.global_unstructured(3, pruning_method=prune.L1Unstructured, amount=1)


def test_identity_and_custom_from_mask():
    e, _ = pair("Linear", 2, 3)
    prune.identity(e, "bias")
    np.testing.assert_array_equal(to_np(e.bias_mask), [1.0, 1.0, 1.0])
    m = prune.custom_from_mask(et.nn.Linear(5, 3), name="bias", mask=et.tensor([0, 1, 0]))
    assert repr(m.bias_mask) == "tensor([0., 1., 0.])"


def test_is_pruned_looks_at_submodules():
    net = et.nn.Sequential(et.nn.Linear(3, 3), et.nn.Linear(3, 1))
    assert prune.is_pruned(net) is False
    prune.random_unstructured(net[1], "weight", amount=1)
    assert prune.is_pruned(net) is True
    prune.remove(net[1], "weight")
    assert prune.is_pruned(net) is False


def test_prune_method_on_a_bare_tensor():
    t = et.tensor([[1.0, -3.0], [0.5, 2.0]])
    out = prune.L1Unstructured(amount=2).prune(t)
    np.testing.assert_array_equal(out.numpy(), [[0.0, -3.0], [0.0, 2.0]])


def test_custom_pruning_method_subclass_like_the_tutorial():
    class FooBarPruningMethod(prune.BasePruningMethod):
        """Prune every other entry in a tensor."""

        PRUNING_TYPE = "unstructured"

        def compute_mask(self, t, default_mask):
            mask = default_mask.clone()
            mask.view(-1)[::2] = 0
            return mask

    e, _ = pair("Linear", 3, 2)
    FooBarPruningMethod.apply(e, "bias")
    np.testing.assert_array_equal(to_np(e.bias_mask), [0.0, 1.0])
    with pytest.raises(TypeError):
        prune.BasePruningMethod()


# -- errors match PyTorch ---------------------------------------------------------------------
def _error_of(fn):
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value), str(info.value)


@pytest.mark.parametrize("case", [
    "too_many", "negative", "float_gt_1", "bad_type", "no_such_name", "remove_unpruned",
    "mask_shape", "structured_1d", "bad_dim", "scores_shape", "struct_too_many",
])
def test_errors_match_torch(case):
    tprune = torch_prune()
    torch = require_torch()
    e, t = pair("Linear", 5, 2)
    calls = {
        "too_many": lambda m, pr, lib: pr.l1_unstructured(m, "weight", amount=12),
        "negative": lambda m, pr, lib: pr.l1_unstructured(m, "weight", amount=-1),
        "float_gt_1": lambda m, pr, lib: pr.random_unstructured(m, "weight", amount=1.5),
        "bad_type": lambda m, pr, lib: pr.l1_unstructured(m, "weight", amount="half"),
        "no_such_name": lambda m, pr, lib: pr.l1_unstructured(m, "foo", amount=1),
        "remove_unpruned": lambda m, pr, lib: pr.remove(m, "weight"),
        "mask_shape": lambda m, pr, lib: pr.custom_from_mask(m, "weight", lib.ones(3)),
        "structured_1d": lambda m, pr, lib: pr.ln_structured(m, "bias", amount=1, n=2, dim=0),
        "bad_dim": lambda m, pr, lib: pr.random_structured(m, "weight", amount=1, dim=2),
        "scores_shape": lambda m, pr, lib: pr.l1_unstructured(
            m, "weight", amount=1, importance_scores=lib.ones(2, 2)),
        "struct_too_many": lambda m, pr, lib: pr.ln_structured(m, "weight", amount=3, n=1, dim=0),
    }
    got = _error_of(lambda: calls[case](e, prune, et))
    want = _error_of(lambda: calls[case](t, tprune, torch))
    assert got[0] is want[0]
    assert got[1] == want[1]
    # a failed pruning leaves the module as it was
    assert keys(e) == keys(t)


def test_container_rejects_foreign_methods():
    c = prune.PruningContainer(prune.L1Unstructured(amount=1))
    with pytest.raises(TypeError, match="is not a BasePruningMethod subclass"):
        c.add_pruning_method(object())
    other = prune.L1Unstructured(amount=1)
    other._tensor_name = "bias"
    c[0]._tensor_name = "weight"
    c._tensor_name = "weight"
    with pytest.raises(ValueError, match="Can only add pruning methods acting on the parameter named 'weight'"):
        c.add_pruning_method(other)


def test_amount_float_rounds_like_python():
    e, _ = pair("Linear", 5, 1)  # 5 weights
    prune.l1_unstructured(e, "weight", amount=0.5)  # round(2.5) == 2 (banker's rounding)
    assert int((e.weight_mask == 0).sum()) == round(2.5) == 2
    assert math.isclose(0.5 * 5, 2.5)


@pytest.mark.parametrize("amount", [1.0, 4, 0.0])
def test_structured_pruning_of_all_or_no_channels_matches_torch(amount):
    tprune = torch_prune()
    e, t = pair("Linear", 3, 4)
    prune.ln_structured(e, "weight", amount=amount, n=1, dim=0)
    tprune.ln_structured(t, "weight", amount=amount, n=1, dim=0)
    np.testing.assert_array_equal(to_np(e.weight_mask), to_np(t.weight_mask))
    e, t = pair("Linear", 3, 4)
    prune.random_structured(e, "weight", amount=amount, dim=0)
    tprune.random_structured(t, "weight", amount=amount, dim=0)
    assert int((e.weight_mask == 0).sum()) == int((t.weight_mask == 0).sum())
