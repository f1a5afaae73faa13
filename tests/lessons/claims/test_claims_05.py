"""Lesson 05 (the training loop and optimizers): its sentences about PyTorch, checked under real
PyTorch 2.13."""
import inspect
import io
import math

import pytest
from _claims import error_of, real_torch, warnings_of

torch = real_torch()
nn, optim, sched = torch.nn, torch.optim, torch.optim.lr_scheduler


def defaults(cls):
    return {k: p.default for k, p in inspect.signature(cls.__init__).parameters.items()
            if p.default is not inspect.Parameter.empty and p.kind is not p.KEYWORD_ONLY}


def test_zero_grad_sets_grads_to_none_by_default():
    """"every ``p.grad`` of the optimizer's parameters becomes ``None`` (``set_to_none=True`` is the
    default)"."""
    p = nn.Parameter(torch.ones(2))
    p.grad = torch.ones(2)
    optimizer = optim.SGD([p], lr=0.1)
    assert inspect.signature(optimizer.zero_grad).parameters["set_to_none"].default is True
    optimizer.zero_grad()
    assert p.grad is None


def test_backward_adds_and_step_skips_a_parameter_without_grad():
    """"``loss.backward()`` | **adds** d loss / d p into every ``p.grad``"; "a parameter whose ``.grad``
    is ``None`` is skipped"."""
    p, q = nn.Parameter(torch.ones(2)), nn.Parameter(torch.ones(2))
    (p * 3).sum().backward()
    (p * 3).sum().backward()
    assert torch.equal(p.grad, torch.full((2,), 6.0))
    optimizer = optim.SGD([p, q], lr=0.1, momentum=0.9)
    optimizer.step()
    assert torch.equal(q, torch.ones(2)) and q not in optimizer.state


def test_sgd_signature_and_update_formulas():
    """"``optim.SGD(params, lr=0.001, momentum=0, dampening=0, weight_decay=0, nesterov=False)``"; the
    formulas; "the buffer starts as the gradient itself, with no dampening"; "The buffer $b$ is
    ``optimizer.state[p]["momentum_buffer"]``"."""
    assert defaults(optim.SGD) == {"lr": 0.001, "momentum": 0, "dampening": 0, "weight_decay": 0, "nesterov": False}
    grads = [torch.tensor([0.5, -1.0]), torch.tensor([0.3, 0.2]), torch.tensor([-0.4, 0.6])]
    for momentum, dampening, weight_decay, nesterov in [(0, 0, 0, False), (0.9, 0, 0, False), (0.9, 0.5, 0, False),
                                                        (0.9, 0, 0.1, False), (0.9, 0, 0, True)]:
        p = nn.Parameter(torch.tensor([1.0, 2.0]))
        optimizer = optim.SGD([p], lr=0.1, momentum=momentum, dampening=dampening,
                              weight_decay=weight_decay, nesterov=nesterov)
        mine, buf = torch.tensor([1.0, 2.0]), None
        for g in grads:
            p.grad = g.clone()
            optimizer.step()
            g = g + weight_decay * mine
            if momentum:
                buf = g.clone() if buf is None else momentum * buf + (1 - dampening) * g
                g = g + momentum * buf if nesterov else buf
            mine = mine - 0.1 * g
            if momentum:
                assert torch.allclose(optimizer.state[p]["momentum_buffer"], buf)
        assert torch.allclose(p, mine)


def adam_by_hand(p, grads, lr, weight_decay, decoupled, betas=(0.9, 0.999), eps=1e-8):
    m, v = torch.zeros_like(p), torch.zeros_like(p)
    for t, g in enumerate(grads, start=1):
        if decoupled:
            p = p * (1 - lr * weight_decay)
        else:
            g = g + weight_decay * p
        m = betas[0] * m + (1 - betas[0]) * g
        v = betas[1] * v + (1 - betas[1]) * g ** 2
        p = p - lr * (m / (1 - betas[0] ** t)) / ((v / (1 - betas[1] ** t)).sqrt() + eps)
    return p


def test_adam_and_adamw_formulas_defaults_and_state():
    """"with ``betas=(0.9, 0.999)``, ``eps=1e-8`` by default"; "AdamW's default is
    ``weight_decay=0.01``; Adam's is 0"; the formulas; state keys ``exp_avg``, ``exp_avg_sq``,
    ``step``."""
    assert {k: defaults(optim.Adam)[k] for k in ("betas", "eps", "weight_decay")} == \
        {"betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0}
    assert defaults(optim.AdamW)["weight_decay"] == 0.01
    grads = [torch.tensor([100.0, 0.001]), torch.tensor([50.0, -0.002]), torch.tensor([80.0, 0.003])]
    for cls, decoupled in ((optim.Adam, False), (optim.AdamW, True)):
        p = nn.Parameter(torch.tensor([1.0, 1.0]))
        optimizer = cls([p], lr=0.01, weight_decay=0.1)
        for g in grads:
            p.grad = g.clone()
            optimizer.step()
        assert torch.allclose(p, adam_by_hand(torch.tensor([1.0, 1.0]), grads, 0.01, 0.1, decoupled))
        assert sorted(optimizer.state[p]) == ["exp_avg", "exp_avg_sq", "step"]


def test_adam_first_step_moves_every_parameter_by_about_lr():
    """"On the first step ... every parameter moves by almost exactly $\\eta$, whatever the size of its
    gradient"; "AdamW's first step above was 0.011, not 0.01"; "Adam's L2 term, added to gradients of
    100 and 0.001, changed nothing on the first step"."""
    for cls, moved in ((optim.Adam, 0.01), (optim.AdamW, 0.011)):
        p = nn.Parameter(torch.tensor([1.0, 1.0]))
        optimizer = cls([p], lr=0.01, weight_decay=0.1)
        p.grad = torch.tensor([100.0, 0.001])
        optimizer.step()
        assert torch.allclose(1 - p.detach(), torch.full((2,), moved), atol=1e-6)


def test_adamw_is_a_subclass_of_adam_with_decoupled_decay():
    """"In PyTorch 2.13 ``AdamW`` is a subclass of ``Adam``: the same as
    ``Adam(..., decoupled_weight_decay=True)``"."""
    assert issubclass(optim.AdamW, optim.Adam)
    a, b = nn.Parameter(torch.tensor([1.0, -2.0])), nn.Parameter(torch.tensor([1.0, -2.0]))
    opt_a = optim.AdamW([a], lr=0.01, weight_decay=0.1)
    opt_b = optim.Adam([b], lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)
    for g in ([0.3, 0.1], [-0.2, 0.5]):
        a.grad, b.grad = torch.tensor(g), torch.tensor(g)
        opt_a.step()
        opt_b.step()
    assert torch.equal(a, b)


def test_parameter_groups_take_defaults_from_the_keywords():
    """"the keyword arguments after the list (``lr=...``) are the defaults for every group that does
    not set them"."""
    w, b = nn.Parameter(torch.ones(2, 2)), nn.Parameter(torch.ones(2))
    optimizer = optim.AdamW([{"params": [w], "weight_decay": 0.05}, {"params": [b], "weight_decay": 0.0}], lr=1e-3)
    assert [(g["lr"], g["weight_decay"]) for g in optimizer.param_groups] == [(1e-3, 0.05), (1e-3, 0.0)]


def lr_curve(make_scheduler, steps=100, metric=None):
    opt = optim.SGD([nn.Parameter(torch.zeros(1))], lr=0.1)
    scheduler = make_scheduler(opt)
    lrs = []
    for i in range(steps):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        scheduler.step() if metric is None else scheduler.step(metric(i))
    return lrs, scheduler


def test_step_and_cosine_schedules():
    """"``StepLR(opt, step_size, gamma=0.1)``: multiply by ``gamma`` every ``step_size`` steps";
    "``CosineAnnealingLR(opt, T_max, eta_min=0)``: half a cosine from the initial lr down to
    ``eta_min`` in ``T_max`` steps"; ``get_last_lr()`` returns the current rates."""
    assert defaults(sched.StepLR)["gamma"] == 0.1 and defaults(sched.CosineAnnealingLR)["eta_min"] == 0
    lrs, scheduler = lr_curve(lambda o: sched.StepLR(o, step_size=30, gamma=0.5))
    assert [round(lrs[i], 5) for i in (0, 29, 30, 60, 99)] == [0.1, 0.1, 0.05, 0.025, 0.0125]
    assert scheduler.get_last_lr() == [pytest.approx(0.0125)]
    lrs, scheduler = lr_curve(lambda o: sched.CosineAnnealingLR(o, T_max=20, eta_min=0.001), steps=21)
    assert lrs[0] == 0.1 and lrs[20] == pytest.approx(0.001)
    assert lrs[10] == pytest.approx(0.001 + (0.1 - 0.001) * (1 + math.cos(math.pi / 2)) / 2)


def test_one_cycle_schedule():
    """"warm up from ``max_lr / div_factor`` (25) to ``max_lr`` during the first 30 % (``pct_start=0.3``),
    then anneal (cosine) down to ``max_lr / (div_factor * final_div_factor)`` (``final_div_factor=1e4``).
    It sets the lr itself, whatever the optimizer was built with, also cycles the momentum the other way,
    0.95 → 0.85 → 0.95 (SGD's ``momentum``, even for an SGD built with ``momentum=0``, ...), and raises a
    ``ValueError`` if stepped more than ``total_steps`` times"."""
    d = defaults(sched.OneCycleLR)
    assert (d["div_factor"], d["pct_start"], d["final_div_factor"]) == (25.0, 0.3, 1e4)
    assert (d["max_momentum"], d["base_momentum"], d["cycle_momentum"]) == (0.95, 0.85, True)
    opt = optim.SGD([nn.Parameter(torch.zeros(1))], lr=123.0)
    scheduler = sched.OneCycleLR(opt, max_lr=0.1, total_steps=100)
    lrs, momenta = [], []
    for _ in range(100):
        lrs.append(opt.param_groups[0]["lr"])
        momenta.append(opt.param_groups[0]["momentum"])
        opt.step()
        scheduler.step()
    assert lrs[0] == pytest.approx(0.1 / 25) and max(lrs) == pytest.approx(0.1)
    assert lrs.index(max(lrs)) == 29
    assert lrs[-1] == pytest.approx(0.1 / 25e4, rel=1e-2)
    assert momenta[0] == pytest.approx(0.95) and min(momenta) == pytest.approx(0.85) and momenta[-1] == pytest.approx(0.95, abs=1e-3)
    opt.step()
    assert isinstance(error_of(scheduler.step), ValueError)
    adam = optim.Adam([nn.Parameter(torch.zeros(1))])
    sched.OneCycleLR(adam, max_lr=0.1, total_steps=10)
    assert adam.param_groups[0]["betas"][0] == pytest.approx(0.95)  # "or Adam's ``beta1``"
    flat = optim.SGD([nn.Parameter(torch.zeros(1))], lr=0.1)
    sched.OneCycleLR(flat, max_lr=0.1, total_steps=10, cycle_momentum=False)
    assert flat.param_groups[0]["momentum"] == 0  # "``cycle_momentum=False`` turns that off"


def test_reduce_lr_on_plateau_multiplies_by_factor_after_patience():
    """"``ReduceLROnPlateau(opt, mode="min", factor=0.1, patience=10)``: steps with a **metric** ... and
    multiplies the lr by ``factor`` when the metric has not improved for more than ``patience`` steps";
    "the ``scheduler.step(metric)`` call of step 36 halves the lr, so step 37 runs with 0.05; ... the lr
    halves every 11 steps while the metric stays flat"."""
    d = defaults(sched.ReduceLROnPlateau)
    assert (d["mode"], d["factor"], d["patience"]) == ("min", 0.1, 10)
    lrs, _ = lr_curve(lambda o: sched.ReduceLROnPlateau(o, factor=0.5, patience=10),
                      metric=lambda i: max(1.0 - 0.02 * i, 0.5))
    assert lrs[36] == 0.1 and lrs[37] == 0.05 and lrs[47] == 0.05 and lrs[48] == 0.025
    assert [round(lrs[i], 5) for i in (0, 25, 50, 99)] == [0.1, 0.1, 0.025, 0.00156]


def test_optimizer_state_dict_names_parameters_by_position_and_resumes_exactly():
    """"``optimizer.state_dict()`` returns ``{"state": {index: {...}}, "param_groups": [...]}`` —
    parameters are named by their position"; "Save all three, and a resumed run is **identical**";
    "without the optimizer's state, the momentum restarts from zero and the run drifts away"."""
    torch.manual_seed(0)
    data = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(10)]

    def make(seed):
        torch.manual_seed(seed)
        model = nn.Linear(4, 1)
        opt = optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        return model, opt, sched.StepLR(opt, step_size=3, gamma=0.5)

    def train(model, opt, scheduler, batches):
        for x, y in batches:
            opt.zero_grad()
            nn.functional.mse_loss(model(x), y).backward()
            opt.step()
            scheduler.step()

    model, opt, scheduler = make(0)
    train(model, opt, scheduler, data)
    a = make(0)
    train(*a, data[:5])
    state = a[1].state_dict()
    assert list(state) == ["state", "param_groups"] and list(state["state"]) == [0, 1]
    assert list(state["state"][0]) == ["momentum_buffer"]
    buffer = io.BytesIO()
    torch.save({"model": a[0].state_dict(), "optimizer": state, "scheduler": a[2].state_dict()}, buffer)
    buffer.seek(0)
    checkpoint = torch.load(buffer)
    b, c = make(123), make(123)
    for run, parts in ((b, ("model", "optimizer", "scheduler")), (c, ("model",))):
        for obj, key in zip(run, ("model", "optimizer", "scheduler")):
            if key in parts:
                obj.load_state_dict(checkpoint[key])
        train(*run, data[5:])
    assert torch.equal(model.weight, b[0].weight)
    assert not torch.allclose(model.weight, c[0].weight, atol=1e-4)


def test_scheduler_step_belongs_after_optimizer_step():
    """"call ``scheduler.step()`` after ``optimizer.step()``": PyTorch warns when the order is reversed."""
    opt = optim.SGD([nn.Parameter(torch.zeros(1))], lr=0.1)
    scheduler = sched.StepLR(opt, step_size=1)
    _, caught = warnings_of(scheduler.step)
    assert any("before `optimizer.step()`" in message for _, message in caught)
