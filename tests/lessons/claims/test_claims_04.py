"""Lesson 04 (pruning): its sentences about PyTorch, checked under real PyTorch 2.13."""
import inspect

import pytest
from _claims import real_torch

torch = real_torch()
nn = torch.nn
prune = pytest.importorskip("torch.nn.utils.prune")


def layer(out_features=4, in_features=6, seed=0):
    torch.manual_seed(seed)
    return nn.Linear(in_features, out_features)


def zeros_fraction(t):
    return (t == 0).float().mean().item()


def test_pruning_reparametrises_weight_with_orig_mask_and_pre_hook():
    """"the ``Parameter`` ``weight`` moved to ``weight_orig``"; "a buffer ``weight_mask`` of 0s and 1s
    was registered (saved in the ``state_dict``)"; "``weight`` became a plain attribute, ``weight_orig *
    weight_mask``, recomputed by the ``L1Unstructured`` object, which is registered as a forward
    pre-hook"; 30 % of the smallest |w| pruned."""
    lin = layer()
    original = lin.weight
    prune.l1_unstructured(lin, "weight", amount=0.3)
    assert lin.weight_orig is original and "weight" not in lin._parameters
    assert [n for n, _ in lin.named_buffers()] == ["weight_mask"] and "weight_mask" in lin.state_dict()
    assert set(lin.weight_mask.unique().tolist()) == {0.0, 1.0}
    hooks = list(lin._forward_pre_hooks.values())
    assert len(hooks) == 1 and type(hooks[0]).__name__ == "L1Unstructured"
    assert torch.equal(lin.weight, lin.weight_orig * lin.weight_mask)
    pruned = lin.weight_orig[lin.weight_mask == 0].abs()
    kept = lin.weight_orig[lin.weight_mask == 1].abs()
    assert pruned.numel() == round(0.3 * 24) and pruned.max() <= kept.min()


def test_gradient_of_pruned_entries_is_zero_and_the_pre_hook_keeps_them_at_zero():
    """"the gradient of every pruned entry of ``weight_orig`` is zero"; "With weight decay the optimizer
    shrinks **every** entry of ``weight_orig``, pruned ones included ..., yet ``weight`` stays zero
    there"."""
    lin = layer()
    prune.l1_unstructured(lin, "weight", amount=0.5)
    optimizer = torch.optim.SGD(lin.parameters(), lr=0.1, weight_decay=0.5)
    mask = lin.weight_mask.bool()
    before = lin.weight_orig.detach().clone()
    lin(torch.randn(8, 6)).pow(2).sum().backward()
    assert torch.equal(lin.weight_orig.grad[~mask], torch.zeros(int((~mask).sum())))
    optimizer.step()
    assert not torch.equal(lin.weight_orig[~mask], before[~mask])
    lin(torch.randn(1, 6))
    assert torch.equal(lin.weight[~mask], torch.zeros(int((~mask).sum())))


def test_structured_dim_zero_removes_rows_and_amount_may_be_a_count():
    """"``dim=0`` removes output neurons (rows), ``dim=1`` input features (columns). ``amount`` is a
    fraction (0.3 = 30 %) or a number of units"; exercise 4.1: half the rows of smallest L2 norm."""
    lin = layer()
    prune.ln_structured(lin, "weight", amount=0.5, n=2, dim=0)
    rows = lin.weight_mask.sum(dim=1)
    assert sorted(rows.tolist()) == [0, 0, 6, 6]
    norms = lin.weight_orig.norm(dim=1)
    assert norms[rows == 0].max() <= norms[rows == 6].min()
    cols = layer()
    prune.random_structured(cols, "weight", amount=2, dim=1)
    assert (cols.weight_mask.sum(dim=0) == 0).sum().item() == 2


def test_only_magnitude_methods_take_importance_scores():
    """"``l1_unstructured``, ``ln_structured`` and ``global_unstructured`` — also take
    ``importance_scores``"; "``random_*``, ``identity`` and ``custom_from_mask`` ... take no scores"."""
    def takes_scores(fn):
        return "importance_scores" in inspect.signature(fn).parameters

    assert all(map(takes_scores, (prune.l1_unstructured, prune.ln_structured, prune.global_unstructured)))
    assert not any(map(takes_scores, (prune.random_unstructured, prune.random_structured, prune.identity,
                                      prune.custom_from_mask)))
    lin = layer()
    scores = torch.arange(24.0).view(4, 6)
    prune.l1_unstructured(lin, "weight", amount=6, importance_scores=scores)
    assert torch.equal(lin.weight_mask.flatten()[:6], torch.zeros(6))


def test_a_custom_method_is_a_base_pruning_method_with_compute_mask():
    """"Every method above is a subclass of ``prune.BasePruningMethod`` with a
    ``compute_mask(t, default_mask)``"; "set ``PRUNING_TYPE`` ..., and call the class method
    ``apply``"."""
    for cls in (prune.L1Unstructured, prune.RandomUnstructured, prune.LnStructured, prune.RandomStructured,
                prune.Identity, prune.CustomFromMask):
        assert issubclass(cls, prune.BasePruningMethod)
    assert {prune.L1Unstructured.PRUNING_TYPE, prune.LnStructured.PRUNING_TYPE} == {"unstructured", "structured"}

    class EveryOther(prune.BasePruningMethod):
        PRUNING_TYPE = "unstructured"

        def compute_mask(self, t, default_mask):
            mask = default_mask.clone()
            mask.view(-1)[::2] = 0
            return mask

    lin = layer()
    EveryOther.apply(lin, "weight")
    assert torch.equal(lin.weight_mask.view(-1)[::2], torch.zeros(12))


def test_iterative_pruning_acts_on_what_is_left_in_a_container():
    """"the second method acts only on the weights that are still unpruned, and ``amount`` is a
    fraction **of those**"; "The module's forward pre-hook becomes a ``PruningContainer``"; exercise 4.2:
    0.5, then 0.4, then random 0.2 leave 1 − 0.5·0.6·0.8 = 76 % zeros."""
    lin = layer(out_features=10, in_features=10)
    prune.l1_unstructured(lin, "weight", amount=0.5)
    prune.l1_unstructured(lin, "weight", amount=0.4)
    assert zeros_fraction(lin.weight) == pytest.approx(0.7)
    prune.random_unstructured(lin, "weight", amount=0.2)
    assert zeros_fraction(lin.weight) == pytest.approx(0.76)
    (hook,) = lin._forward_pre_hooks.values()
    assert isinstance(hook, prune.PruningContainer) and len(hook._pruning_methods) == 3


def test_global_pruning_ranks_all_layers_together():
    """"``prune.global_unstructured`` ranks the weights of **all** the given tensors together and
    removes the smallest overall: each layer ends up with its own sparsity"."""
    torch.manual_seed(0)
    small, big = nn.Linear(4, 4), nn.Linear(4, 4)
    with torch.no_grad():
        big.weight.mul_(10)
    prune.global_unstructured([(small, "weight"), (big, "weight")], pruning_method=prune.L1Unstructured, amount=0.5)
    assert zeros_fraction(small.weight) > 0.9 and zeros_fraction(big.weight) < 0.1
    assert zeros_fraction(torch.cat([small.weight.flatten(), big.weight.flatten()])) == 0.5


def test_remove_makes_pruning_permanent():
    """"``prune.remove(module, name)`` makes ``weight`` a plain ``Parameter`` again — holding the zeros —
    and deletes ``weight_orig``, ``weight_mask`` and the hook"."""
    lin = layer()
    prune.l1_unstructured(lin, "weight", amount=0.5)
    pruned = lin.weight.detach().clone()
    prune.remove(lin, "weight")
    assert isinstance(lin.weight, nn.Parameter) and torch.equal(lin.weight, pruned)
    assert not hasattr(lin, "weight_orig") and not hasattr(lin, "weight_mask") and not lin._forward_pre_hooks
    assert sorted(lin.state_dict()) == ["bias", "weight"]


def test_a_mask_leaves_the_weight_dense():
    """"``weight`` is still a dense tensor of the full shape"."""
    lin = layer()
    prune.l1_unstructured(lin, "weight", amount=0.9)
    assert lin.weight.layout == torch.strided and lin.weight.shape == (4, 6)
