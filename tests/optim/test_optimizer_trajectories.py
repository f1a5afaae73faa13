"""Adadelta, Adamax, NAdam, RAdam and LBFGS: the same trajectories as PyTorch's."""
import numpy as np
import pytest

import edutorch as et

TORCH_REASON = "real PyTorch not installed: parity test skipped"

CASES = [
    ("Adadelta", {}),
    ("Adadelta", {"lr": 0.5, "rho": 0.8, "weight_decay": 0.1, "maximize": False}),
    ("Adamax", {}),
    ("Adamax", {"lr": 0.01, "betas": (0.8, 0.9), "weight_decay": 0.1}),
    ("NAdam", {}),
    ("NAdam", {"weight_decay": 0.1, "momentum_decay": 0.01}),
    ("NAdam", {"weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("RAdam", {"lr": 0.01}),
    ("RAdam", {"weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("RAdam", {"weight_decay": 0.1}),
    ("LBFGS", {}),
    ("LBFGS", {"lr": 0.5, "history_size": 3, "max_iter": 5}),
    ("LBFGS", {"line_search_fn": "strong_wolfe"}),
    ("LBFGS", {"line_search_fn": "strong_wolfe", "history_size": 2, "tolerance_change": 1e-12}),
]


def _trajectory(lib, name, kwargs, steps=20):
    """Minimise a least-squares + quartic loss on two parameters; record them after every step."""
    rng = np.random.default_rng(1)
    A, b = lib.tensor(rng.standard_normal((6, 4))), lib.tensor(rng.standard_normal(6))
    w = lib.tensor(rng.standard_normal(4), requires_grad=True)
    c = lib.tensor(rng.standard_normal(()), requires_grad=True)
    opt = getattr(lib.optim, name)([w, c], **kwargs)

    def closure():
        opt.zero_grad()
        loss = ((A @ w + c - b) ** 2).sum() + 0.1 * (w ** 4).sum()
        loss.backward()
        return loss

    path, losses = [], []
    for _ in range(steps):
        if name == "LBFGS":
            losses.append(opt.step(closure).detach().item())
        else:
            losses.append(closure().detach().item())
            opt.step()
        path.append(np.concatenate([w.detach().numpy(), c.detach().numpy().reshape(1)]))
    return np.array(path), np.array(losses), opt


@pytest.mark.parametrize("name,kwargs", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_trajectory_matches_torch(name, kwargs):
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    mine, my_losses, my_opt = _trajectory(et, name, kwargs)
    theirs, their_losses, their_opt = _trajectory(torch, name, kwargs)
    np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(my_losses, their_losses, rtol=1e-10, atol=1e-12)
    assert my_losses[-1] < my_losses[0]  # it optimizes
    my_state, their_state = my_opt.state_dict(), their_opt.state_dict()
    assert my_state["param_groups"] == their_state["param_groups"]
    if name != "LBFGS":
        for key, value in their_state["state"][0].items():
            np.testing.assert_allclose(np.asarray(my_state["state"][0][key].tolist()),
                                       np.asarray(value.tolist()), rtol=1e-10, atol=1e-12, err_msg=key)


@pytest.mark.parametrize("name,kwargs", [("Adadelta", {"rho": 1.5}), ("Adadelta", {"lr": -1}),
                                         ("Adamax", {"betas": (1.0, 0.9)}), ("NAdam", {"momentum_decay": -1}),
                                         ("RAdam", {"eps": -1}), ("LBFGS", {"lr": -1})])
def test_invalid_arguments_match_torch(name, kwargs):
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    with pytest.raises(ValueError) as theirs:
        getattr(torch.optim, name)([torch.zeros(1, requires_grad=True)], **kwargs)
    with pytest.raises(ValueError) as mine:
        getattr(et.optim, name)([et.zeros(1, requires_grad=True)], **kwargs)
    assert str(mine.value) == str(theirs.value)


def test_lbfgs_rejects_parameter_groups_and_unknown_line_search():
    p, q = et.zeros(1, requires_grad=True), et.zeros(1, requires_grad=True)
    with pytest.raises(ValueError, match="per-parameter options"):
        et.optim.LBFGS([{"params": [p]}, {"params": [q]}])
    opt = et.optim.LBFGS([p], line_search_fn="armijo")

    def closure():
        opt.zero_grad()
        loss = ((p - 1) ** 2).sum()
        loss.backward()
        return loss

    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        opt.step(closure)


def test_lbfgs_solves_a_quadratic_without_torch():
    rng = np.random.default_rng(0)
    M = rng.standard_normal((5, 5))
    A = et.tensor(M @ M.T + 5 * np.eye(5))
    b = et.tensor(rng.standard_normal(5))
    x = et.zeros(5, dtype=et.float64, requires_grad=True)
    opt = et.optim.LBFGS([x], line_search_fn="strong_wolfe", max_iter=50, tolerance_grad=1e-12,
                          tolerance_change=1e-15)

    def closure():
        opt.zero_grad()
        loss = 0.5 * (x @ (A @ x)) - b @ x
        loss.backward()
        return loss

    opt.step(closure)
    np.testing.assert_allclose(x.detach().numpy(), np.linalg.solve(A.numpy(), b.numpy()), rtol=1e-6)
