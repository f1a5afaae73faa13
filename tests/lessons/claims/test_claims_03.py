"""Lesson 03 (hooks): its sentences about PyTorch, checked under real PyTorch 2.13."""
from collections import OrderedDict

import pytest
from _claims import real_torch, warnings_of

torch = real_torch()
nn = torch.nn
module_hooks = pytest.importorskip("torch.nn.modules.module")


def test_forward_pre_hook_gets_args_as_a_tuple_and_forward_hook_the_output():
    """"calls every **forward pre-hook** with ``(module, args)`` — the positional arguments, always as
    a tuple — then ``forward``, then every **forward hook** with ``(module, args, output)``"."""
    layer, seen = nn.Linear(3, 2), []
    layer.register_forward_pre_hook(lambda m, args: seen.append(("pre", type(args), len(args))))
    layer.register_forward_hook(lambda m, args, out: seen.append(("post", type(args), tuple(out.shape))))
    layer(torch.randn(4, 3))
    assert seen == [("pre", tuple, 1), ("post", tuple, (4, 2))]


def test_handles_remove_hooks_kept_in_ordered_dicts_by_id():
    """"``handle.remove()`` unregisters the hook"; "The hooks live in plain ordered dictionaries on
    the module, keyed by the handle's id"."""
    layer = nn.Linear(3, 2)
    handle = layer.register_forward_hook(lambda *a: None)
    assert isinstance(layer._forward_hooks, OrderedDict) and list(layer._forward_hooks) == [handle.id]
    handle.remove()
    assert len(layer._forward_hooks) == 0


def test_backward_hooks_receive_tuples_of_gradients_wrt_inputs_not_parameters():
    """"A **full backward pre-hook** ``(module, grad_output)``"; "a **full backward hook** ``(module,
    grad_input, grad_output)``"; "Both receive tuples"; "``grad_input`` holds gradients with respect to
    the module's **inputs** ..., not its parameters"."""
    layer, seen = nn.Linear(3, 2), {}
    layer.register_full_backward_pre_hook(lambda m, go: seen.update(pre=go))  # returns None: only looks
    layer.register_full_backward_hook(lambda m, gi, go: seen.update(post=(gi, go)))
    x = torch.randn(4, 3, requires_grad=True)
    layer(x).sum().backward()
    grad_input, grad_output = seen["post"]
    assert isinstance(seen["pre"], tuple) and isinstance(grad_input, tuple)
    assert [tuple(g.shape) for g in grad_input] == [(4, 3)] and torch.equal(grad_input[0], x.grad)
    assert [tuple(g.shape) for g in grad_output] == [(4, 2)]


def test_the_42_example():
    """PyTorch's "42" example: the pre-hook adds 1 to the input, the forward hook makes the layer
    residual, "the backward hook replaces every input gradient by 42"."""
    torch.manual_seed(1)
    m, x = nn.Linear(3, 3), torch.randn(2, 3, requires_grad=True)
    plain = m(x)
    pre = m.register_forward_pre_hook(lambda mod, inputs: inputs[0] + 1.0)
    assert torch.allclose(m(x), m.forward(x + 1))
    post = m.register_forward_hook(lambda mod, inputs, output: output + inputs[0])
    assert torch.allclose(m(x), m.forward(x + 1) + x + 1)
    pre.remove()
    post.remove()
    assert torch.equal(m(x), plain)
    m.register_full_backward_hook(lambda mod, gi, go: [torch.ones_like(g) * 42.0 for g in gi])
    m(x).sum().backward()
    assert torch.equal(x.grad, torch.full((2, 3), 42.0))


def test_hook_order_forward_first_to_last_backward_last_to_first():
    """"forward visits the layers first to last — pre-hook, forward, hook for each — and backward
    visits them **last to first**, the backward pre-hook of a layer before its backward hook"; "the
    backward pass ends at layer ``0``"; exercise 3.1's model ``Sequential(Linear, Tanh)``."""
    model, events = nn.Sequential(nn.Linear(3, 4), nn.Tanh()), []
    for name, layer in model.named_children():
        layer.register_forward_pre_hook(lambda m, a, n=name: events.append(f"{n} forward_pre"))
        layer.register_forward_hook(lambda m, a, o, n=name: events.append(f"{n} forward"))
        layer.register_full_backward_pre_hook(lambda m, go, n=name: events.append(f"{n} backward_pre"))
        layer.register_full_backward_hook(lambda m, gi, go, n=name: events.append(f"{n} backward"))
    warnings_of(lambda: model(torch.randn(2, 3)).sum().backward())
    assert events == ["0 forward_pre", "0 forward", "1 forward_pre", "1 forward",
                      "1 backward_pre", "1 backward", "0 backward_pre", "0 backward"]


def test_first_layer_backward_hook_fires_with_none_and_warns():
    """"the hook runs with ``grad_input = (None,)`` — and PyTorch warns about it"."""
    layer, seen = nn.Linear(3, 2), []
    layer.register_full_backward_hook(lambda m, gi, go: seen.append(gi))
    _, caught = warnings_of(lambda: layer(torch.randn(4, 3)).sum().backward())
    assert seen == [(None,)]
    assert any("Full backward hook is firing when gradients are computed with respect to module outputs "
               "since no inputs require gradients" in message for _, message in caught)


def test_backward_pre_hook_and_hook_return_values_replace_gradients():
    """"full backward pre-hook | new ``grad_output`` | the gradient flowing into the module's
    backward"; "full backward hook | new ``grad_input`` | the gradient flowing on to earlier layers"."""
    layer = nn.Linear(3, 2)
    layer.register_full_backward_pre_hook(lambda m, go: (go[0] * 0,))
    x = torch.randn(4, 3, requires_grad=True)
    layer(x).sum().backward()
    assert torch.equal(x.grad, torch.zeros(4, 3)) and torch.equal(layer.weight.grad, torch.zeros(2, 3))


def test_global_hooks_see_every_module_and_run_before_the_modules_own():
    """"``register_module_forward_hook(hook)`` registers a hook for **every** module"; "Global hooks run
    before the module's own hooks"."""
    calls = []
    model = nn.Sequential(nn.Linear(2, 2), nn.Tanh())
    model[0].register_forward_hook(lambda m, a, o: calls.append("own"))
    handle = module_hooks.register_module_forward_hook(lambda m, a, o: calls.append(type(m).__name__))
    try:
        model(torch.randn(1, 2))
    finally:
        handle.remove()
    assert calls == ["Linear", "own", "Tanh", "Sequential"]


def test_prepend_and_with_kwargs():
    """"Hooks of one kind run in the order they were registered; ``prepend=True`` puts a hook first";
    "register with ``with_kwargs=True`` and the hook also receives the keyword arguments —
    ``hook(module, args, kwargs)`` for a pre-hook, which may return a new ``(args, kwargs)`` pair, and
    ``hook(module, args, kwargs, output)`` for a forward hook"."""
    class Scale(nn.Module):
        def forward(self, x, factor=1.0):
            return x * factor

    scale, order, seen = Scale(), [], []
    scale.register_forward_pre_hook(lambda m, a: order.append("first registered"))
    scale.register_forward_pre_hook(lambda m, a: order.append("prepended"), prepend=True)
    scale.register_forward_pre_hook(lambda m, a, k: (a, {**k, "factor": k["factor"] * 2}), with_kwargs=True)
    scale.register_forward_hook(lambda m, a, k, out: seen.append(k), with_kwargs=True)
    scale.register_forward_pre_hook(lambda m, a: seen.append(a))
    assert torch.equal(scale(torch.ones(2), factor=3.0), torch.full((2,), 6.0))
    assert order == ["prepended", "first registered"]
    assert seen[0][0].shape == (2,) and len(seen[0]) == 1 and seen[1] == {"factor": 6.0}


def test_tensor_register_hook_sees_and_replaces_the_gradient_and_returns_a_handle():
    """"The hook is called with the gradient of the loss with respect to ``t`` when backward reaches
    it, and may return a new gradient that replaces it for the rest of backward"; "It returns a
    handle"."""
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    h, seen = x * 3, []
    handle = h.register_hook(lambda g: seen.append(g.clone()) or g * 10)
    (h ** 2).sum().backward()
    assert torch.equal(seen[0], torch.tensor([6.0, 12.0])) and torch.equal(x.grad, torch.tensor([180.0, 360.0]))
    handle.remove()


def test_call_order_global_pre_hooks_pre_hooks_forward_global_hooks_hooks():
    """"``Module.__call__`` = global forward pre-hooks → forward pre-hooks → ``forward`` → global forward
    hooks → forward hooks"."""
    calls = []

    class Probe(nn.Module):
        def forward(self, x):
            calls.append("forward")
            return x

    probe = Probe()
    probe.register_forward_pre_hook(lambda m, a: calls.append("pre"))
    probe.register_forward_hook(lambda m, a, o: calls.append("hook"))
    handles = [module_hooks.register_module_forward_pre_hook(lambda m, a: calls.append("global pre")),
               module_hooks.register_module_forward_hook(lambda m, a, o: calls.append("global hook"))]
    try:
        probe(torch.ones(1))
    finally:
        for handle in handles:
            handle.remove()
    assert calls == ["global pre", "pre", "forward", "global hook", "hook"]
