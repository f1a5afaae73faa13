"""Lesson 11 (freezing and fine-tuning): its sentences about PyTorch, checked under real PyTorch 2.13."""
import copy

from _claims import error_of, real_torch

torch = real_torch()
nn = torch.nn


class DigitNet(nn.Module):
    """The lesson's model: a body with a BatchNorm, and a Linear head."""

    def __init__(self, classes):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(64, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Linear(64, 32), nn.ReLU())
        self.head = nn.Linear(32, classes)

    def forward(self, x):
        return self.head(self.body(x))


def digit_net(classes=10):
    torch.manual_seed(0)
    return DigitNet(classes)


def test_an_op_is_recorded_only_when_an_input_requires_grad():
    """"Autograd records an operation only when grad mode is on **and at least one of its inputs
    requires grad**"; "``c = a.relu() + b`` is recorded (``AddBackward0``), but its first input has
    no node (``None``) ... ``frozen.grad`` stays ``None``"."""
    data, weight, frozen = torch.randn(4, 3), torch.randn(3, 2, requires_grad=True), torch.randn(3, 2)
    a, b = data @ frozen, data @ weight
    c = a.relu() + b
    assert (a.requires_grad, a.grad_fn) == (False, None)
    assert b.grad_fn.name() == "MmBackward0" and c.grad_fn.name() == "AddBackward0"
    assert [n if n is None else n.name() for n, _ in c.grad_fn.next_functions] == [None, "MmBackward0"]
    c.sum().backward()
    assert weight.grad.shape == (3, 2) and frozen.grad is None


def test_exercise_11_1_predictions():
    """The rule, one operation at a time, on exercise 11.1's six expressions."""
    x, frozen_w = torch.randn(4, 3), torch.randn(3, 2)
    w, b = torch.randn(3, 2, requires_grad=True), torch.zeros(2, requires_grad=True)
    with torch.no_grad():
        inside = x @ w
    assert (x @ w).requires_grad and not (x @ frozen_w).requires_grad
    assert (x @ frozen_w + b).requires_grad and not (x @ w.detach()).requires_grad
    assert not inside.requires_grad and not ((x @ w).sum().item() * x).requires_grad


def test_module_requires_grad_reaches_every_parameter_and_cuts_the_graph_at_the_head():
    """"``Module.requires_grad_(False)`` calls ``requires_grad_(False)`` on **every parameter** of
    the module and its submodules"; "the head's node (``AddmmBackward0``) has no node for its
    input: the edge is ``None`` ... only the head gets a ``.grad``"."""
    model = digit_net()
    x, y = torch.randn(40, 64), torch.randint(0, 10, (40,))
    model.body.requires_grad_(False)
    assert not any(p.requires_grad for p in model.body.parameters())
    loss = nn.functional.cross_entropy(model(x), y)
    addmm = loss.grad_fn.next_functions[0][0].next_functions[0][0]
    assert addmm.name() == "AddmmBackward0" and addmm.next_functions[1][0] is None
    loss.backward()
    assert all(p.grad is None for p in model.body.parameters())
    assert all(p.grad is not None for p in model.head.parameters())


def test_assigning_requires_grad_on_a_module_freezes_nothing():
    """"**``model.body.requires_grad = False``** ... does *not* freeze anything. A ``Module`` has no
    ``requires_grad`` attribute; the assignment just creates one"."""
    model = digit_net()
    assert not hasattr(model.body, "requires_grad")
    model.body.requires_grad = False
    assert all(p.requires_grad for p in model.body.parameters())


def test_a_new_layer_requires_grad_and_freezing_the_body_never_reaches_the_head():
    """"A newly made layer's parameters **require grad by default**"; "the order of freezing and
    replacing does not matter, because ``model.body.requires_grad_(False)`` never reaches the head;
    it does matter when you freeze the *whole* model"."""
    replaced_then_frozen = digit_net()
    replaced_then_frozen.head = nn.Linear(32, 2)
    replaced_then_frozen.body.requires_grad_(False)
    assert all(p.requires_grad for p in replaced_then_frozen.head.parameters())
    whole = digit_net()
    whole.head = nn.Linear(32, 2)
    whole.requires_grad_(False)
    assert not any(p.requires_grad for p in whole.head.parameters())


def test_a_frozen_parameter_in_the_optimizer_does_no_harm():
    """"A frozen parameter in it would do no harm (its ``.grad`` stays ``None``, and ``step()``
    skips it)"."""
    model = digit_net(classes=2)
    model.body.requires_grad_(False)
    before = copy.deepcopy(model.body.state_dict())
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    nn.functional.cross_entropy(model(torch.randn(8, 64)), torch.randint(0, 2, (8,))).backward()
    optimizer.step()
    assert all(torch.equal(before[k], v) for k, v in model.body.state_dict().items() if "running" not in k
               and "num_batches" not in k)
    assert all(p not in optimizer.state for p in model.body.parameters())


def test_an_optimizer_made_too_early_never_moves_the_new_head():
    """"an optimizer made *before* the head is replaced holds the *old* head's parameters ... the new
    head never changes"; "``zero_grad()`` clears only the optimizer's own (old) parameters, so the new
    head's gradient even accumulates"."""
    model = digit_net()
    model.body.requires_grad_(False)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    model.head = nn.Linear(32, 2)
    before = model.head.weight.detach().clone()
    x, y = torch.randn(40, 64), torch.randint(0, 2, (40,))
    grads = []
    for _ in range(3):
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
        grads.append(model.head.weight.grad.clone())
    assert torch.equal(before, model.head.weight)
    assert torch.allclose(grads[2], 3 * grads[0], atol=1e-6)


def test_freezing_does_not_freeze_batchnorm_statistics_but_eval_does():
    """"``requires_grad_(False)`` freezes the **parameters**. It does not touch **modes**:
    ``model.train()`` puts the body's BatchNorm in training mode again, where it ... moves its
    ``running_mean``" (even under ``no_grad``); "after ``model.train()``, call ``model.body.eval()``.
    The body then normalises with the pretrained statistics and leaves them alone"."""
    model = digit_net()
    model.body.requires_grad_(False)
    norm, x = model.body[1], torch.randn(40, 64) + 3
    start = norm.running_mean.clone()
    model.train()
    with torch.no_grad():
        model(x)
    assert not torch.equal(norm.running_mean, start) and norm.weight.grad is None
    moved = norm.running_mean.clone()
    model.train()
    model.body.eval()
    model(x)
    assert torch.equal(norm.running_mean, moved) and model.head.training


def test_no_grad_results_do_not_require_grad_and_frozen_ops_with_trainable_inputs_are_recorded():
    """"``p.requires_grad_(False)`` ... an op that also has a trainable input is still recorded";
    ``no_grad``: "nothing inside is recorded, whatever the inputs; results have
    ``requires_grad=False``"."""
    p, w = torch.randn(3).requires_grad_(False), torch.randn(3, requires_grad=True)
    assert (p * w).requires_grad
    with torch.no_grad():
        result = p * w
    assert not result.requires_grad and result.grad_fn is None


def test_inference_tensors_cannot_be_saved_so_cached_features_come_from_no_grad():
    """"PyTorch refuses to save an inference tensor for backward, and a ``Linear`` saves its input
    (``RuntimeError: Inference tensors cannot be saved for backward``)"; features made under
    ``no_grad()`` train a head."""
    model = digit_net(classes=2)
    model.body.eval()
    x, y = torch.randn(40, 64), torch.randint(0, 2, (40,))
    with torch.inference_mode():
        inference_features = model.body(x)
    assert inference_features.is_inference()
    error = error_of(lambda: model.head(inference_features))
    assert isinstance(error, RuntimeError) and "Inference tensors cannot be saved for backward" in str(error)
    with torch.no_grad():
        features = model.body(x)
    nn.functional.cross_entropy(model.head(features), y).backward()
    assert model.head.weight.grad is not None


def test_a_head_trained_on_cached_features_is_the_fine_tuned_head():
    """"Training the head on cached features gives the same head as fine-tuning with the frozen
    body: the same numbers went into the same 100 updates"."""
    x, y = torch.randn(40, 64), torch.randint(0, 2, (40,))
    model = digit_net(classes=2)
    model.body.requires_grad_(False)
    model.train()
    model.body.eval()
    head = copy.deepcopy(model.head)
    with torch.no_grad():
        features = model.body(x)
    for module, inputs, run in ((model, x, model), (head, features, head)):
        optimizer = torch.optim.Adam(module.parameters() if module is head else model.head.parameters(), lr=0.01)
        for _ in range(20):
            optimizer.zero_grad()
            nn.functional.cross_entropy(run(inputs), y).backward()
            optimizer.step()
    assert torch.allclose(head.weight, model.head.weight, atol=1e-5)


def test_backward_reaches_66_of_6434_gradient_entries():
    """"backward stops at the head (2 parameters instead of 8) and computes 66 gradient entries instead
    of 6,434"; "computed 1% of the gradient entries"."""
    scratch, finetuned = digit_net(classes=2), digit_net(classes=2)
    finetuned.body.requires_grad_(False)
    counts = []
    for model in (scratch, finetuned):
        model.zero_grad()
        nn.functional.cross_entropy(model(torch.randn(8, 64)), torch.randint(0, 2, (8,))).backward()
        reached = [p for p in model.parameters() if p.grad is not None]
        counts.append((len(reached), sum(p.numel() for p in reached)))
    assert counts == [(8, 6434), (2, 66)] and round(100 * 66 / 6434) == 1
