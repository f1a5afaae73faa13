"""ConstantLR, LinearLR, MultiplicativeLR, PolynomialLR, SequentialLR, ChainedScheduler: PyTorch's lrs."""
import warnings

import pytest

import edutorch as et

TORCH_REASON = "real PyTorch not installed: parity test skipped"


def _lrs(lib, make, epochs=14, groups=2):
    params = [lib.zeros(1, requires_grad=True) for _ in range(groups)]
    opt = lib.optim.SGD([{"params": [p], "lr": 0.1 * (i + 1)} for i, p in enumerate(params)], lr=0.1)
    sched = make(lib.optim.lr_scheduler, opt)
    seen = [list(sched.get_last_lr())]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(epochs):
            opt.step()
            sched.step()
            seen.append(list(sched.get_last_lr()))
    return seen, [g["lr"] for g in opt.param_groups]


CASES = {
    "constant": lambda S, o: S.ConstantLR(o, factor=0.5, total_iters=4),
    "linear_warmup": lambda S, o: S.LinearLR(o, start_factor=0.1, total_iters=5),
    "linear_decay": lambda S, o: S.LinearLR(o, start_factor=1.0, end_factor=0.2, total_iters=8),
    "multiplicative": lambda S, o: S.MultiplicativeLR(o, lambda epoch: 0.9),
    "polynomial": lambda S, o: S.PolynomialLR(o, total_iters=6, power=2.0),
    "sequential_warmup_cosine": lambda S, o: S.SequentialLR(
        o, [S.LinearLR(o, start_factor=0.1, total_iters=3), S.CosineAnnealingLR(o, T_max=8)], milestones=[3]),
    "sequential_three": lambda S, o: S.SequentialLR(
        o, [S.ConstantLR(o, factor=0.5, total_iters=2), S.ExponentialLR(o, gamma=0.9), S.StepLR(o, 3)],
        milestones=[2, 6]),
    "chained": lambda S, o: S.ChainedScheduler([S.ConstantLR(o, factor=0.1, total_iters=2),
                                                S.ExponentialLR(o, gamma=0.9)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_schedules_match_torch(name):
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    mine, theirs = _lrs(et, CASES[name]), _lrs(torch, CASES[name])
    assert mine[1] == pytest.approx(theirs[1], rel=1e-12)
    for a, b in zip(mine[0], theirs[0]):
        assert a == pytest.approx(b, rel=1e-12)


def test_linear_warmup_reaches_the_base_lr_without_torch():
    seen, final = _lrs(et, CASES["linear_warmup"], epochs=7, groups=1)
    assert seen[0][0] == pytest.approx(0.01) and seen[5][0] == pytest.approx(0.1) and final == pytest.approx([0.1])


def test_closed_forms_match_torch_when_an_epoch_is_given():
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    for make in (CASES["constant"], CASES["linear_decay"], CASES["polynomial"]):
        results = []
        for lib in (et, torch):
            opt = lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=0.1)
            sched = make(lib.optim.lr_scheduler, opt)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                opt.step()
                sched.step(5)
            results.append(sched.get_last_lr())
        assert results[0] == pytest.approx(results[1], rel=1e-12)


@pytest.mark.parametrize("bad", [
    lambda S, o: S.ConstantLR(o, factor=2.0), lambda S, o: S.LinearLR(o, start_factor=0.0),
    lambda S, o: S.LinearLR(o, end_factor=1.5), lambda S, o: S.SequentialLR(o, [S.StepLR(o, 2)], milestones=[3]),
    lambda S, o: S.SequentialLR(o, [], milestones=[]), lambda S, o: S.ChainedScheduler([]),
])
def test_invalid_arguments_match_torch(bad):
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    with pytest.raises(ValueError) as theirs:
        bad(torch.optim.lr_scheduler, torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1))
    with pytest.raises(ValueError) as mine:
        bad(et.optim.lr_scheduler, et.optim.SGD([et.zeros(1, requires_grad=True)], lr=0.1))
    assert str(mine.value) == str(theirs.value)


def test_sequential_state_dict_round_trip():
    opt = et.optim.SGD([et.zeros(1, requires_grad=True)], lr=0.1)
    S = et.optim.lr_scheduler
    sched = S.SequentialLR(opt, [S.LinearLR(opt, total_iters=2), S.ExponentialLR(opt, 0.5)], milestones=[2])
    for _ in range(3):
        opt.step()
        sched.step()
    state = sched.state_dict()
    assert len(state["_schedulers"]) == 2 and "optimizer" not in state
    opt2 = et.optim.SGD([et.zeros(1, requires_grad=True)], lr=0.1)
    again = S.SequentialLR(opt2, [S.LinearLR(opt2, total_iters=2), S.ExponentialLR(opt2, 0.5)], milestones=[2])
    again.load_state_dict(state)
    assert again.last_epoch == sched.last_epoch and again._schedulers[1].last_epoch == sched._schedulers[1].last_epoch
