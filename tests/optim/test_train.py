"""The reusable training loop and the digits example (>= 95 % test accuracy)."""
import os
import sys

import pytest

import edutorch as et
from edutorch.datasets import make_blobs
from edutorch.utils.data import DataLoader
from edutorch.utils.train import evaluate, format_epoch, train_epoch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
import train_mlp  # noqa: E402


def test_digits_example_reaches_95_percent():
    lines = []
    history = train_mlp.main(et, epochs=15, log=lines.append)
    assert len(history) == len(lines) == 15
    assert history[-1]["test_accuracy"] >= 0.95
    assert history[-1]["train_loss"] < history[0]["train_loss"] / 10
    assert lines[0].startswith("epoch  1/15  train loss ") and "test loss" in lines[0]


def test_fit_stops_at_target_accuracy():
    history = train_mlp.main(et, epochs=15, target_accuracy=0.9, log=None)
    assert history[-1]["test_accuracy"] >= 0.9 and len(history) < 15


def test_train_epoch_and_evaluate_on_blobs():
    et.manual_seed(0)
    ds = make_blobs(n_samples=120, n_classes=3, cluster_std=0.5, as_dataset=True)
    loader = DataLoader(ds, batch_size=16, shuffle=True)
    model = et.nn.Sequential(et.nn.Linear(2, 16), et.nn.ReLU(), et.nn.Linear(16, 3))
    loss_fn = et.nn.CrossEntropyLoss()
    opt = et.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    sched = et.optim.lr_scheduler.StepLR(opt, step_size=8, gamma=0.5)
    before = evaluate(model, loader, loss_fn)
    for _ in range(3):
        stats = train_epoch(model, loader, loss_fn, opt, max_norm=1.0, scheduler=sched)
    after = evaluate(model, loader, loss_fn)
    assert after["loss"] < before["loss"] and after["accuracy"] >= 0.9
    assert set(stats) == {"loss", "accuracy"}
    assert opt.param_groups[0]["lr"] == pytest.approx(0.1 * 0.5 ** (24 // 8))
    assert not model.training


def test_format_epoch():
    line = format_epoch({"epoch": 3, "lr": 0.05, "train_loss": 0.41234, "train_accuracy": 0.882,
                         "seconds": 0.21}, 20)
    assert line == "epoch  3/20  train loss 0.4123 acc  88.2%  | lr 0.05  (0.21 s)"


def test_same_loop_runs_under_real_torch():
    torch = pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")
    history = train_mlp.main(torch, epochs=4, log=None)
    assert history[-1]["test_accuracy"] >= 0.9
