"""LR schedulers give exactly PyTorch's learning-rate sequences (same float arithmetic)."""
import warnings

import pytest

import edutorch as et
from edutorch import optim as et_optim


@pytest.fixture
def torch():
    """Real PyTorch, the oracle; tests that use it skip when it is not installed."""
    return pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")

EPOCHS = 40

SCHEDULERS = [
    ("StepLR", dict(step_size=7, gamma=0.5)),
    ("StepLR", dict(step_size=3)),
    ("MultiStepLR", dict(milestones=[5, 12, 12, 30], gamma=0.3)),
    ("ExponentialLR", dict(gamma=0.93)),
    ("CosineAnnealingLR", dict(T_max=10)),
    ("CosineAnnealingLR", dict(T_max=13, eta_min=0.001)),
    ("LambdaLR", dict(lr_lambda=lambda epoch: 0.95**epoch)),
    ("LambdaLR", dict(lr_lambda=[lambda e: 1 / (1 + e), lambda e: 0.9**e])),
    ("OneCycleLR", dict(max_lr=0.5, total_steps=EPOCHS + 1)),
    ("OneCycleLR", dict(max_lr=[0.5, 0.2], epochs=4, steps_per_epoch=11, anneal_strategy="linear")),
    ("OneCycleLR", dict(max_lr=0.5, total_steps=EPOCHS + 2, three_phase=True, pct_start=0.25)),
]


def _optimizer(lib, optim_name="SGD"):
    a, b = lib.zeros(2, requires_grad=True), lib.zeros(3, requires_grad=True)
    groups = [{"params": [a]}, {"params": [b], "lr": 0.05}]
    if optim_name == "SGD":
        return lib.optim.SGD(groups, lr=0.1, momentum=0.9)
    return getattr(lib.optim, optim_name)(groups, lr=0.1)


def _sequence(lib, name, kwargs, optim_name="SGD"):
    opt = _optimizer(lib, optim_name)
    sched = getattr(lib.optim.lr_scheduler, name)(opt, **kwargs)
    seq = [list(sched.get_last_lr())]
    momenta = []
    for _ in range(EPOCHS):
        opt.step()
        sched.step()
        seq.append(list(sched.get_last_lr()))
        momenta.append([g.get("momentum", g.get("betas")) for g in opt.param_groups])
    return seq, momenta, sched


@pytest.fixture(autouse=True)
def _edutorch_as_lib(monkeypatch):
    et.optim = et_optim


@pytest.mark.parametrize("name,kwargs", SCHEDULERS, ids=[f"{n}{i}" for i, (n, _) in enumerate(SCHEDULERS)])
@pytest.mark.parametrize("optim_name", ["SGD", "Adam"])
def test_lr_sequence_matches_torch(name, kwargs, optim_name, torch):
    ours, our_m, sched = _sequence(et, name, kwargs, optim_name)
    theirs, their_m, tsched = _sequence(torch, name, kwargs, optim_name)
    assert ours == theirs  # exact floats
    assert our_m == their_m
    state, tstate = sched.state_dict(), tsched.state_dict()
    assert list(state) == list(tstate)
    for key, value in tstate.items():
        if key not in ("lr_lambdas", "milestones"):
            assert state[key] == value, key


def test_reduce_lr_on_plateau_matches_torch(torch):
    metrics = [1.0, 0.9, 0.9, 0.91, 0.95, 0.9, 0.89, 0.9, 0.9, 0.9, 0.9, 0.9, 0.7] + [0.7] * 25
    for kwargs in (dict(patience=2), dict(mode="max", factor=0.5, patience=1, cooldown=2, min_lr=0.02),
                   dict(threshold_mode="abs", threshold=0.05, patience=0, min_lr=[0.01, 0.0])):
        results = []
        for lib in (et, torch):
            opt = _optimizer(lib)
            sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, **kwargs)
            lrs = []
            for m in metrics:
                opt.step()
                sched.step(m)
                lrs.append(sched.get_last_lr())
            results.append((lrs, sched.state_dict()))
        assert results[0] == results[1]


def test_chained_schedulers_and_closed_form_epoch(torch):
    seqs = []
    for lib in (et, torch):
        opt = _optimizer(lib)
        a = lib.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9)
        b = lib.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5)
        seq = []
        for _ in range(12):
            opt.step()
            a.step()
            b.step()
            seq.append([g["lr"] for g in opt.param_groups])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            b.step(20)  # deprecated epoch argument: the closed form
        seq.append(b.get_last_lr())
        seqs.append(seq)
    assert seqs[0] == seqs[1]


def test_state_dict_round_trip_continues_the_schedule():
    opt = _optimizer(et)
    sched = et_optim.lr_scheduler.CosineAnnealingLR(opt, T_max=9)
    for _ in range(5):
        opt.step()
        sched.step()
    saved_opt, saved_sched = opt.state_dict(), sched.state_dict()
    rest = []
    for _ in range(6):
        opt.step()
        sched.step()
        rest.append(sched.get_last_lr())
    opt2 = _optimizer(et)
    opt2.load_state_dict(saved_opt)
    sched2 = et_optim.lr_scheduler.CosineAnnealingLR(opt2, T_max=9, last_epoch=4)
    sched2.load_state_dict(saved_sched)
    rest2 = []
    for _ in range(6):
        opt2.step()
        sched2.step()
        rest2.append(sched2.get_last_lr())
    assert rest == rest2


def test_warning_when_scheduler_steps_first_and_errors(torch):
    opt = _optimizer(et)
    sched = et_optim.lr_scheduler.StepLR(opt, 2)
    with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
        sched.step()
    topt = _optimizer(torch)
    for fn, tfn in [
        (lambda: et_optim.lr_scheduler.StepLR(object(), 2), lambda: torch.optim.lr_scheduler.StepLR(object(), 2)),
        (lambda: et_optim.lr_scheduler.ReduceLROnPlateau(opt, factor=1.0),
         lambda: torch.optim.lr_scheduler.ReduceLROnPlateau(topt, factor=1.0)),
        (lambda: et_optim.lr_scheduler.OneCycleLR(opt, 0.1), lambda: torch.optim.lr_scheduler.OneCycleLR(topt, 0.1)),
        (lambda: et_optim.lr_scheduler.LambdaLR(opt, [lambda e: 1.0]),
         lambda: torch.optim.lr_scheduler.LambdaLR(topt, [lambda e: 1.0])),
    ]:
        with pytest.raises(Exception) as ours:
            fn()
        with pytest.raises(Exception) as theirs:
            tfn()
        assert (type(ours.value), str(ours.value)) == (type(theirs.value), str(theirs.value))
    onecycle = et_optim.lr_scheduler.OneCycleLR(_optimizer(et), 0.1, total_steps=2)
    onecycle.optimizer.step()
    onecycle.step()
    onecycle.step()
    with pytest.raises(ValueError, match="Tried to step 3 times"):
        onecycle.step()
