"""Shared memory and ``edutorch.multiprocessing``: Hogwild training updates one model.

The proof that memory is shared and not copied: child processes change the
parent's tensors (a counter incremented under a lock, and a model trained by
two processes at once), with ``fork`` (the children inherit the mapping) and
with ``spawn`` (the tensors are pickled as handles to the shared block).
"""
import inspect
import warnings

import numpy as np
import pytest

import edutorch as et
import edutorch.multiprocessing as mp

REASON = "real PyTorch not installed: parity test skipped"
STEPS = 30


# -- what the children run (module level: spawn pickles functions by name) ------------------
def increment(t, lock, times):
    for _ in range(times):
        with lock, et.no_grad():
            t.add_(1.0)


def regression_data():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 3)).astype(np.float32)
    y = x @ np.array([[1.0], [-2.0], [0.5]], dtype=np.float32) + 0.3
    return et.tensor(x), et.tensor(y)


def loss_of(model):
    x, y = regression_data()
    with et.no_grad():
        return ((model(x) - y) ** 2).mean().item()


def train(model):
    """The ``train`` of PyTorch's Hogwild example: own optimizer, shared parameters."""
    x, y = regression_data()
    optimizer = et.optim.SGD(model.parameters(), lr=0.05)
    for i in range(STEPS):
        batch = slice((i * 16) % 64, (i * 16) % 64 + 16)
        optimizer.zero_grad()
        ((model(x[batch]) - y[batch]) ** 2).mean().backward()
        optimizer.step()  # this updates the shared parameters


def train_rank(rank, model):
    train(model)


def fail(rank):
    raise ValueError(f"rank {rank} failed on purpose")


def report_shared(t, queue):
    queue.put((t.is_shared(), float(t.sum())))


# -- Tensor.share_memory_ / is_shared -------------------------------------------------------------
def test_share_memory_moves_the_array_once_and_keeps_values():
    t = et.arange(6.0).reshape(2, 3)
    assert not t.is_shared()
    assert t.share_memory_() is t and t.is_shared()
    array = t.numpy()
    assert t.share_memory_().numpy() is array  # already shared: nothing moves
    assert t.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert t[1].is_shared() and t.t().is_shared()  # views of shared memory are shared
    assert not t.clone().is_shared()


def test_module_share_memory_covers_parameters_grads_and_buffers():
    model = et.nn.Sequential(et.nn.Linear(3, 2), et.nn.BatchNorm1d(2))
    model[0].weight.grad = et.zeros(2, 3)
    assert model.share_memory() is model
    assert all(p.is_shared() for p in model.parameters())
    assert all(b.is_shared() for b in model.buffers())
    assert model[0].weight.grad.is_shared()
    assert isinstance(model[0].weight, et.nn.Parameter) and model[0].weight.requires_grad
    out = model(et.ones(4, 3))  # still an ordinary, trainable model
    out.sum().backward()
    assert model[0].weight.grad is not None


def test_a_tensor_sent_through_a_queue_is_the_same_memory():
    t = et.zeros(3)
    q = mp.Queue()
    q.put(t)
    received = q.get(timeout=10)
    assert t.is_shared() and received.is_shared()  # sending moved it, as in PyTorch
    received.add_(5.0)
    assert t.tolist() == [5.0, 5.0, 5.0]


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_children_change_the_parents_tensor(method):
    ctx = mp.get_context(method)
    counter = et.zeros(1).share_memory_()
    lock = ctx.Lock()
    procs = [ctx.Process(target=increment, args=(counter, lock, 50)) for _ in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0]
    assert counter.item() == 100.0  # 2 processes x 50 increments, all in the parent's memory


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_hogwild_two_processes_train_one_shared_model(method):
    et.manual_seed(0)
    model = et.nn.Linear(3, 1)
    model.share_memory()  # required for fork, as the PyTorch example says
    before = [p.detach().numpy().copy() for p in model.parameters()]
    loss_before = loss_of(model)
    ctx = mp.get_context(method)
    processes = []
    for rank in range(2):
        p = ctx.Process(target=train, args=(model,))
        p.start()
        processes.append(p)
    for p in processes:
        p.join(120)
    assert [p.exitcode for p in processes] == [0, 0]
    after = [p.detach().numpy() for p in model.parameters()]
    assert all(not np.allclose(a, b) for a, b in zip(after, before))  # the parent's model changed
    assert loss_of(model) < 0.2 * loss_before


def test_spawn_runs_fn_with_rank_and_shared_args():
    model = et.nn.Linear(3, 1)
    model.share_memory()
    loss_before = loss_of(model)
    assert mp.spawn(train_rank, args=(model,), nprocs=2) is None
    assert loss_of(model) < 0.2 * loss_before


def test_spawn_raises_the_childs_exception():
    with pytest.raises(mp.ProcessRaisedException, match="ValueError: rank 0 failed on purpose") as info:
        mp.spawn(fail, nprocs=1)
    assert info.value.error_index == 0
    assert "-- Process 0 terminated with the following error:" in str(info.value)


def test_spawn_with_join_false_returns_the_context():
    context = mp.spawn(train_rank, args=(et.nn.Linear(3, 1),), nprocs=1, join=False)
    assert isinstance(context, mp.ProcessContext) and len(context.pids()) == 1
    while not context.join():
        pass


def test_multiprocessing_re_exports_pythons():
    import multiprocessing

    for name in ("Process", "Queue", "Pool", "Lock", "get_context", "set_start_method", "Manager"):
        assert getattr(mp, name) is getattr(multiprocessing, name)
    assert mp.get_sharing_strategy() == "file_descriptor"


# -- pinned memory: what CPU-only PyTorch does -------------------------------------------------------
def test_pin_memory_without_an_accelerator():
    with pytest.raises(RuntimeError, match="Cannot access accelerator device when none is available."):
        et.ones(2).pin_memory()
    with pytest.raises(RuntimeError, match="no pinned memory allocator is available on this system"):
        et.tensor([1.0], pin_memory=True)
    assert et.ones(2).is_pinned() is False
    x = et.arange(8.0).reshape(4, 2)
    loader = et.utils.data.DataLoader(et.utils.data.TensorDataset(x), batch_size=2, pin_memory=True)
    with pytest.warns(UserWarning, match="no accelerator is found, then device pinned memory won't be used"):
        batches = list(loader)
    assert [b[0].tolist() for b in batches] == [[[0.0, 1.0], [2.0, 3.0]], [[4.0, 5.0], [6.0, 7.0]]]
    assert not batches[0][0].is_pinned()


# -- parity with torch ----------------------------------------------------------------------------
def _outcome(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = fn()
        except Exception as e:  # noqa: BLE001
            result = (type(e).__name__, str(e))
    # PyTorch's C++ warnings end with "(Triggered internally at <its source file>)"
    return result, [(w.category.__name__, str(w.message).split(" (Triggered internally")[0])
                    for w in caught]


def _memory_calls(lib):
    def loader():
        x = lib.arange(8.0).reshape(4, 2)
        dl = lib.utils.data.DataLoader(lib.utils.data.TensorDataset(x), batch_size=2, pin_memory=True)
        return [[t.tolist() for t in b] for b in dl]

    def share():
        t = lib.ones(3)
        before = t.is_shared()
        same = t.share_memory_() is t
        m = lib.nn.Linear(2, 2)
        return before, same, t.is_shared(), t[1:].is_shared(), m.share_memory() is m, m.weight.is_shared()

    return [
        share,
        loader,
        lambda: lib.ones(2).pin_memory(),
        lambda: lib.ones(2).pin_memory("cpu"),
        lambda: lib.ones(2).is_pinned(),
        lambda: lib.ones(2).is_pinned("cpu"),
        lambda: lib.tensor([1.0], pin_memory=True),
        lambda: lib.nn.Parameter(lib.ones(2)).share_memory_().is_shared(),
    ]


@pytest.mark.parametrize("i", range(len(_memory_calls(et))))
def test_parity_shared_and_pinned_memory(i):
    torch = pytest.importorskip("torch", reason=REASON)
    assert _outcome(_memory_calls(et)[i]) == _outcome(_memory_calls(torch)[i])


def test_parity_multiprocessing_namespace():
    pytest.importorskip("torch", reason=REASON)
    import torch.multiprocessing as tmp

    for name in ("spawn", "start_processes"):
        assert inspect.signature(getattr(mp, name)) == inspect.signature(getattr(tmp, name))
    for name in ("Process", "Queue", "SimpleQueue", "Pool", "Lock", "Event", "get_context",
                 "get_start_method", "set_start_method", "Manager", "ProcessContext",
                 "ProcessRaisedException", "ProcessExitedException", "get_sharing_strategy",
                 "set_sharing_strategy", "get_all_sharing_strategies"):
        assert hasattr(tmp, name) and hasattr(mp, name), name
    assert mp.get_start_method() == tmp.get_start_method()
    assert mp.get_sharing_strategy() == tmp.get_sharing_strategy()
