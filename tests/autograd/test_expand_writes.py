"""Writes into an ``expand()`` view (issue 23), as PyTorch 2.13 decides them.

An expand repeats elements (stride 0).  PyTorch refuses a write whose result would
depend on the order elements are written in ("more than one element of the
written-to tensor refers to a single memory location"), by its rule: a stride 0
along a dim of size > 1 in the tensor written.  ``fill_``, ``zero_``,
``masked_fill_`` and ``threshold_`` do not check it; ``x[idx] = v`` checks only
``x[idx]``; a sub-view without repeats (``v[:, 0]``) can be written.  With a graph
(the base requires grad) only ``x[idx] = v`` gets through.  Each case runs on both
libraries; the torch-free examples are in tests/fuzz/test_regressions.py.
"""
import warnings

import pytest

import edutorch

WRITES = [
    "v.fill_(1)", "v.zero_()", "v.add_(1)", "v.mul_(2)", "v.copy_(torch.ones(3, 3))", "v[0] = 1", "v[:, 0] = 1",
    "v[0, 0] = 5", "v.masked_fill_(torch.ones(3, 3, dtype=torch.bool), 2)", "v.clamp_(0, 1)", "v.relu_()",
    "v.sigmoid_()", "v.narrow(1, 0, 0).add_(1)", "v.narrow(0, 0, 0).mul_(2)", "v.narrow(1, 0, 1).add_(1)",
    "v[:, :1].mul_(2)", "v.uniform_()", "v.normal_()", "v.neg_()", "v.detach().fill_(2)", "v.t().fill_(3)",
    "v[[0]] = 1", "v[torch.ones(3, 3, dtype=torch.bool)] = 4", "v[0:1, 0] = 9",
    "v[:, 1:2] = torch.tensor([[7.0], [8.0], [9.0]])", "v.unsqueeze(0).fill_(2)", "v.diagonal().add_(1)",
    "v[:, 0].add_(1)", "v.select(1, 2).mul_(3)", "torch.nn.functional.threshold_(v, 1.5, 0.0)",
    "torch.nn.functional.relu(v, inplace=True)", "v[...] = 1", "v[:] = 1", "v[0][0] = 5", "v[1].fill_(2)",
    "v.add_(torch.ones(3, 3))", "v.expand(2, 3, 3)[0, 0].fill_(4)", "v.copy_(v)",
]
WITH_GRAPH = ["v.fill_(1)", "v[:, 0].mul_(3)", "v[0, 1] = 7", "v[0, 1:2] = 4", "v[:, 0] = 1", "v[0] = 1",
              "v[[0]] = 1", "v.masked_fill_(torch.tensor([[True], [False], [False]]), 5)", "v.add_(1)"]


def run(torch, write, graph):
    """``write`` on ``v``, an expand of a (3, 1) tensor: the values after it (and gradients with a graph),
    or the error."""
    x = torch.tensor([[1.0], [2.0], [3.0]], requires_grad=graph)
    a = x * 1 if graph else x.clone()
    v = a.expand(3, 3)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # PyTorch: "Use of masked_fill_ on expanded tensors is deprecated"
            exec(write, {"v": v, "torch": torch})
        if not graph:
            return a.tolist() if "uniform_" not in write and "normal_" not in write else "ran"
        (a * torch.tensor([[1.0], [2.0], [3.0]])).sum().backward()
        return a.tolist(), x.grad.tolist()
    except RuntimeError as e:
        return "RuntimeError: " + str(e).split(".")[0]


@pytest.mark.parametrize("write", WRITES)
def test_a_write_into_an_expand_is_run_or_refused_as_in_pytorch(write):
    torch = pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")
    assert run(edutorch, write, False) == run(torch, write, False)


@pytest.mark.parametrize("write", WITH_GRAPH)
def test_with_a_graph_only_an_indexed_write_without_repeats_runs_as_in_pytorch(write):
    torch = pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")
    assert run(edutorch, write, True) == run(torch, write, True)


REFUSED = "RuntimeError: unsupported operation: more than one element of the written-to tensor refers to a single " \
          "memory location"


@pytest.mark.parametrize("write, graph, expected", [
    ("v.fill_(1)", False, [[1.0], [1.0], [1.0]]),
    ("v.add_(1)", False, REFUSED),
    ("v[:, 0] = 1", False, [[1.0], [1.0], [1.0]]),
    ("v[0] = 1", False, REFUSED),
    ("v.select(1, 2).mul_(3)", False, [[3.0], [6.0], [9.0]]),
    ("v.uniform_()", False, REFUSED),
    ("v.fill_(1)", True, REFUSED),
    ("v[0, 1] = 7", True, ([[7.0], [2.0], [3.0]], [[0.0], [2.0], [3.0]])),
])
def test_writes_into_an_expand_without_torch(write, graph, expected):
    assert run(edutorch, write, graph) == expected


VALUE_WRITES = ["v[[0]] = w", "v[[0]] = 1.0", "v[0] = w[0]", "v[0, 1] = w[0, 1]", "v[:, 0] = w[:, 0]", "v.fill_(w[0, 0])",
                "v.masked_fill_(torch.tensor([[True], [False], [False]]), w[0, 0])", "v.copy_(w)", "v.add_(w)"]


def run_with_value(torch, write, base_grad):
    """``write`` of a value ``w`` that requires grad into an expand of a base that may not."""
    x = torch.tensor([[1.0], [2.0], [3.0]], requires_grad=base_grad)
    a = x * 1
    v = a.expand(3, 3)
    w = torch.ones(3, 3, requires_grad=True)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(write, {"v": v, "torch": torch, "w": w})
        (v * v).sum().backward()
        return a.tolist(), w.grad.tolist()
    except RuntimeError as e:
        return "RuntimeError: " + str(e).split(".")[0][:60]


@pytest.mark.parametrize("base_grad", [False, True])
@pytest.mark.parametrize("write", VALUE_WRITES)
def test_writing_a_value_that_requires_grad_into_an_expand_as_in_pytorch(write, base_grad):
    # (PyTorch lets index_put_ and masked_fill_ through when only the value requires grad)
    torch = pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")
    assert run_with_value(edutorch, write, base_grad) == run_with_value(torch, write, base_grad)
