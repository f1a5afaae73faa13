"""torch.profiler: events and their names vs PyTorch 2.13, the table's layout, the
Chrome trace's structure, the schedule's steps.  No timing is asserted: only which
events exist, how they nest, and how they are printed."""
import json
import re
import warnings

import pytest

import edutorch
from edutorch.autograd import function as _function
from edutorch.profiler import ProfilerAction, ProfilerActivity, profile, record_function, schedule

REASON = ("real PyTorch not installed: profiler parity test skipped (its CPU build: pip install "
          "--index-url https://download.pytorch.org/whl/cpu torch==2.13.0)")
EVALUATE = "autograd::engine::evaluate_function: "


def _mlp_step(T, prof_mod, **options):
    """A 4-8-2 MLP forward and backward inside ``record_function("model_step")``."""
    T.manual_seed(0)
    model = T.nn.Sequential(T.nn.Linear(4, 8), T.nn.ReLU(), T.nn.Linear(8, 2))
    x, y = T.randn(3, 4), T.randn(3, 2)
    with prof_mod.profile(activities=[prof_mod.ProfilerActivity.CPU], **options) as prof:
        with prof_mod.record_function("model_step"):
            loss = T.nn.functional.mse_loss(model(x), y)
            loss.backward()
    return prof


def _children(prof, name):
    """Names of the direct children of the (first) event called ``name``."""
    parent = next(e for e in prof.events() if e.name == name)
    return [c.name for c in parent.cpu_children]


# -- events: names, counts, nesting ----------------------------------------------------


def test_mlp_events_nest_under_record_function():
    prof = _mlp_step(edutorch, edutorch.profiler)
    top = [e.name for e in prof.events() if e.cpu_parent is None]
    assert top == ["model_step"]
    children = _children(prof, "model_step")
    assert children[:4] == ["aten::linear", "aten::relu", "aten::linear", "aten::mse_loss"]
    nodes = [n[len(EVALUATE):] for n in children if n.startswith(EVALUATE)]
    assert nodes == ["MseLossBackward0", "AddmmBackward0", "torch::autograd::AccumulateGrad",
                     "torch::autograd::AccumulateGrad", "ReluBackward0", "AddmmBackward0",
                     "torch::autograd::AccumulateGrad", "torch::autograd::AccumulateGrad"]
    for event in prof.events():  # each evaluate_function holds exactly its node's event
        if event.name.startswith(EVALUATE):
            assert [c.name for c in event.cpu_children] == [event.name[len(EVALUATE):]]


def test_mlp_events_match_torch():
    torch = pytest.importorskip("torch", reason=REASON)
    import torch.profiler

    ours = _children(_mlp_step(edutorch, edutorch.profiler), "model_step")
    theirs = _children(_mlp_step(torch, torch.profiler), "model_step")
    # PyTorch's documented extras: F.mse_loss calls broadcast_tensors in Python, backward()
    # builds its seed with ones_like, and its Linear transposes the weight with a separate
    # t() op, which has a node (TBackward0); edutorch's linear takes the weight as it is.
    extras = {"aten::broadcast_tensors", "aten::ones_like", EVALUATE + "TBackward0"}
    assert ours == [name for name in theirs if name not in extras]


def test_forward_op_is_linked_to_its_node_by_sequence_number():
    prof = _mlp_step(edutorch, edutorch.profiler)
    forward = {e.sequence_nr for e in prof.events() if e.name == "aten::linear"}
    backward = {e.sequence_nr for e in prof.events() if e.name == "AddmmBackward0"}
    assert forward == backward and len(forward) == 2


OPS = {
    "add": lambda T, a, b: a + b, "sub": lambda T, a, b: a - b, "mul": lambda T, a, b: a * b,
    "div": lambda T, a, b: a / b, "neg": lambda T, a, b: -a, "exp": lambda T, a, b: a.exp(),
    "log": lambda T, a, b: a.abs().log(), "tanh": lambda T, a, b: a.tanh(),
    "sigmoid": lambda T, a, b: a.sigmoid(), "relu": lambda T, a, b: a.relu(),
    "sum": lambda T, a, b: a.sum(), "sum_dim": lambda T, a, b: a.sum(1), "mean": lambda T, a, b: a.mean(),
    "mm": lambda T, a, b: a.mm(b.t()), "pow": lambda T, a, b: a ** 2, "view": lambda T, a, b: a.view(12),
    "t": lambda T, a, b: a.t(), "transpose": lambda T, a, b: a.transpose(0, 1),
    "permute": lambda T, a, b: a.permute(1, 0), "unsqueeze": lambda T, a, b: a.unsqueeze(0),
    "squeeze": lambda T, a, b: a.unsqueeze(0).squeeze(0), "cat": lambda T, a, b: T.cat([a, b]),
    "stack": lambda T, a, b: T.stack([a, b]), "softmax": lambda T, a, b: a.softmax(1),
    "log_softmax": lambda T, a, b: T.nn.functional.log_softmax(a, 1), "max": lambda T, a, b: a.max(),
    "clamp": lambda T, a, b: a.clamp(-1, 1), "gelu": lambda T, a, b: T.nn.functional.gelu(a),
    "silu": lambda T, a, b: T.nn.functional.silu(a), "leaky_relu": lambda T, a, b: T.nn.functional.leaky_relu(a),
    "linear": lambda T, a, b: T.nn.functional.linear(a, b), "select": lambda T, a, b: a[0],
    "slice": lambda T, a, b: a[:, 1:3], "clone": lambda T, a, b: a.clone(), "var": lambda T, a, b: a.var(),
    "logsumexp": lambda T, a, b: a.logsumexp(1), "cumsum": lambda T, a, b: a.cumsum(1),
    "to": lambda T, a, b: a.to(T.float64), "layer_norm": lambda T, a, b: T.nn.functional.layer_norm(a, (4,)),
    "max_pool2d": lambda T, a, b: T.nn.functional.max_pool2d(a.view(1, 1, 3, 4), 2),
    "avg_pool2d": lambda T, a, b: T.nn.functional.avg_pool2d(a.view(1, 1, 3, 4), 2),
}


def _top_level_names(T, prof_mod, op):
    T.manual_seed(0)
    a, b = T.randn(3, 4, requires_grad=True), T.randn(3, 4)
    with prof_mod.profile() as prof:
        op(T, a, b)
    return [e.name for e in prof.events() if e.cpu_parent is None]


@pytest.mark.parametrize("op", sorted(OPS))
def test_op_names_match_torch(op):
    torch = pytest.importorskip("torch", reason=REASON)
    import torch.profiler

    assert _top_level_names(edutorch, edutorch.profiler, OPS[op]) == \
        _top_level_names(torch, torch.profiler, OPS[op])


def test_custom_function_is_recorded_by_class_name():
    class Double(edutorch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.exp() * 0 + x * 2  # ops inside forward are the Function's children

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    x = edutorch.ones(3, requires_grad=True)
    with profile() as prof:
        Double.apply(x).sum().backward()
    assert _children(prof, "Double") == ["aten::exp", "aten::mul", "aten::mul", "aten::add"]
    assert _children(prof, "DoubleBackward") == ["aten::mul"]
    assert EVALUATE + "DoubleBackward" in [e.name for e in prof.events()]


def test_record_function_as_decorator_and_outside_a_profiler():
    @record_function("my_block")
    def block(x):
        return x * 2

    x = edutorch.ones(2)
    assert block(x).tolist() == [2.0, 2.0]  # no profiler: just runs
    with profile() as prof:
        block(x)
        with record_function("outer"):
            block(x)
    events = prof.events()
    assert [e.name for e in events if e.cpu_parent is None] == ["my_block", "outer"]
    assert _children(prof, "outer") == ["my_block"]
    assert [e.cat for e in events if e.name == "my_block"] == ["user_annotation"] * 2


def _registered():
    """The profiler's interceptors registered with Function.apply and the engine."""
    from edutorch.autograd import engine
    return [fn.__name__ for _, fn in _function.apply_interceptors.active + engine.node_interceptors.active]


def test_hooks_are_off_outside_the_block_even_after_an_error():
    with pytest.raises(ValueError):
        with profile():
            assert _registered() == ["record_op", "record_kernel", "record_node"]
            raise ValueError("boom")
    assert _registered() == []
    with profile():
        with pytest.raises(RuntimeError, match="already enabled"):
            profile().__enter__()


def test_a_block_left_open_ends_when_the_profiler_stops():
    """Recording only logs raw records; the events are built from the log once, when read."""
    with profile() as prof:
        record_function("left_open").__enter__()  # never exited
        edutorch.ones(2) * 2
    events = prof.events()
    block = next(e for e in events if e.name == "left_open")
    (mul,) = block.cpu_children
    assert mul.name == "aten::mul" and mul.cpu_parent is block
    assert block.start_us <= mul.start_us and mul.end_us <= block.end_us  # closed at the stop, after the op
    assert block.cpu_time_total > mul.cpu_time_total > 0
    assert prof.events()[0] is events[0]  # the same event objects on a second read


def test_autograd_profiler_aliases():
    assert edutorch.autograd.profiler.record_function is edutorch.profiler.record_function
    x = edutorch.ones(2, requires_grad=True)
    with edutorch.autograd.profiler.profile(record_shapes=True) as prof:
        (x * 3).sum().backward()
    names = [e.name for e in prof.function_events]
    assert names[:2] == ["aten::mul", "aten::sum"] and "MulBackward0" in names
    assert "aten::mul" in prof.table() and prof.key_averages()[0].key == "aten::mul"
    with edutorch.autograd.profiler.profile(enabled=False) as off:
        x * 3
    assert off.function_events is None


# -- the table ------------------------------------------------------------------------------


def test_table_header_rules_and_footer_match_torch():
    torch = pytest.importorskip("torch", reason=REASON)
    import torch.profiler

    for memory in (False, True):
        ours = _mlp_step(edutorch, edutorch.profiler, profile_memory=memory)
        theirs = _mlp_step(torch, torch.profiler, profile_memory=memory)
        ours_lines = ours.key_averages().table(sort_by="cpu_time_total", row_limit=5).splitlines()
        theirs_lines = theirs.key_averages().table(sort_by="cpu_time_total", row_limit=5).splitlines()
        assert ours_lines[:3] == theirs_lines[:3]  # rule, column names, rule
        assert ours_lines[-2] == theirs_lines[-2]  # closing rule
        assert len(ours_lines) == len(theirs_lines) == 5 + 5
        assert re.fullmatch(r"Self CPU time total: \d+\.\d{3}(us|ms|s)", ours_lines[-1])
        # the top row: the record_function block holds everything, as in PyTorch
        assert ours_lines[3].split()[0] == theirs_lines[3].split()[0] == "model_step"
        assert ours_lines[3].split()[3] == "100.00%"  # PyTorch's may round to 99.99% or 100.01%


def test_table_sorts_limits_and_sums():
    prof = _mlp_step(edutorch, edutorch.profiler, profile_memory=True)
    rows = prof.key_averages()
    for key in ("cpu_time_total", "self_cpu_time_total", "cpu_memory_usage", "self_cpu_memory_usage", "count"):
        lines = rows.table(sort_by=key, row_limit=4).splitlines()[3:-2]
        assert len(lines) == 4
        values = [getattr(r, key) for r in sorted(rows, key=lambda r: getattr(r, key), reverse=True)[:4]]
        names = [r.key for r in sorted(rows, key=lambda r: getattr(r, key), reverse=True)[:4]]
        assert [line[:55].strip() for line in lines] == [n if len(n) < 52 else n[:52] + "..." for n in names]
        assert values == sorted(values, reverse=True)
    # self times add up to the whole profile: Self CPU % sums to 100
    table = rows.table(row_limit=-1).splitlines()[3:-2]
    assert sum(float(line[55:].split()[0].rstrip("%")) for line in table) == pytest.approx(100, abs=0.2)
    counts = {r.key: r.count for r in rows}
    assert counts["aten::linear"] == 2 and counts[EVALUATE + "torch::autograd::AccumulateGrad"] == 4


def test_input_shapes_column_and_grouping():
    prof = _mlp_step(edutorch, edutorch.profiler, record_shapes=True)
    plain = prof.key_averages().table()
    assert "Input Shapes" not in plain  # as in PyTorch: shapes only when grouped by them
    grouped = prof.key_averages(group_by_input_shape=True)
    assert "Input Shapes" in grouped.table()
    linear = [r.input_shapes for r in grouped if r.key == "aten::linear"]
    # edutorch's linear op takes (bias, input, weight)
    assert linear == [[[8], [3, 4], [8, 4]], [[2], [3, 8], [2, 8]]]
    relu = next(e for e in prof.events() if e.name == "aten::relu")
    assert relu.input_shapes == [[3, 8]]


def test_memory_columns_match_torch_for_new_outputs():
    torch = pytest.importorskip("torch", reason=REASON)
    import torch.profiler

    ours = {r.key: r for r in _mlp_step(edutorch, edutorch.profiler, profile_memory=True).key_averages()}
    theirs = {r.key: r for r in _mlp_step(torch, torch.profiler, profile_memory=True).key_averages()}
    for name in ("aten::relu", "aten::linear"):  # 3x8 and 3x2 float32 outputs: 96 B and 24 B
        assert ours[name].cpu_memory_usage == theirs[name].cpu_memory_usage
    assert ours["aten::relu"].cpu_memory_usage == 96
    assert "CPU Mem" in _mlp_step(edutorch, edutorch.profiler, profile_memory=True).key_averages().table()


def test_memory_release_is_a_negative_record():
    x = edutorch.ones(1000)
    with profile(profile_memory=True) as prof:
        with record_function("free"):
            y = x * 2
            del y  # released inside the block: charged to it
    block = next(e for e in prof.events() if e.name == "free")
    assert block.cpu_children[0].self_cpu_memory_usage == 4000
    assert block.self_cpu_memory_usage == -4000 and block.cpu_memory_usage == 0


def test_with_stack_gives_source_locations():
    with profile(with_stack=True) as prof:
        edutorch.ones(2) * 2
    table = prof.key_averages(group_by_stack_n=1).table()
    assert "Source Location" in table and "test_profiler.py" in table


# -- the Chrome trace -------------------------------------------------------------------------


def test_chrome_trace_is_valid_trace_event_json(tmp_path):
    prof = _mlp_step(edutorch, edutorch.profiler, record_shapes=True)
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())
    assert isinstance(trace["traceEvents"], list) and trace["displayTimeUnit"] in ("ms", "ns")
    assert isinstance(trace["baseTimeNanoseconds"], int)
    complete = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    meta = [e for e in trace["traceEvents"] if e["ph"] == "M"]
    assert {e["name"] for e in meta} >= {"process_name", "thread_name"}
    assert len(complete) == len(prof.events())
    for event in complete:
        assert set(event) >= {"ph", "name", "cat", "ts", "dur", "pid", "tid", "args"}
        assert isinstance(event["ts"], (int, float)) and isinstance(event["dur"], (int, float))
        assert event["dur"] >= 0 and isinstance(event["pid"], int) and isinstance(event["tid"], int)
    # nesting is by time: every op lies inside the record_function block's interval
    block = next(e for e in complete if e["name"] == "model_step")
    assert block["cat"] == "user_annotation"
    for event in complete:
        assert block["ts"] <= event["ts"] and event["ts"] + event["dur"] <= block["ts"] + block["dur"] + 1e-3
    linear = next(e for e in complete if e["name"] == "aten::linear")
    assert linear["args"]["Input Dims"] == [[8], [3, 4], [8, 4]] and linear["cat"] == "cpu_op"


# -- schedule and step -------------------------------------------------------------------------

SCHEDULES = [
    dict(wait=1, warmup=1, active=2),
    dict(wait=1, warmup=1, active=2, repeat=2),
    dict(wait=0, warmup=2, active=1, repeat=1, skip_first=3),
    dict(wait=2, warmup=1, active=3, repeat=1, skip_first=2, skip_first_wait=1),
    dict(wait=0, warmup=0, active=1),
]


@pytest.mark.parametrize("kwargs", SCHEDULES, ids=str)
def test_schedule_actions_match_torch(kwargs):
    torch = pytest.importorskip("torch", reason=REASON)
    import torch.profiler

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = schedule(**kwargs), torch.profiler.schedule(**kwargs)
    assert [ours(s).name for s in range(25)] == [theirs(s).name for s in range(25)]


def test_schedule_errors():
    with pytest.raises(AssertionError, match="active=0 \\(need > 0\\)"):
        schedule(wait=0, warmup=1, active=0)
    with pytest.warns(UserWarning, match="won't be using warmup"):
        schedule(wait=0, warmup=0, active=1)


def _recorded_steps(T, prof_mod, kwargs, steps=9):
    """Run ``steps`` steps, step i doing i+1 multiplications; each trace handed to
    on_trace_ready is summarised as (step_num, multiplications, ProfilerStep events)."""
    traces = []

    def ready(prof):
        names = [e.name for e in prof.events()]
        traces.append((prof.step_num, names.count("aten::mul"), names.count("ProfilerStep*")))

    a = T.ones(2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with prof_mod.profile(schedule=prof_mod.schedule(**kwargs), on_trace_ready=ready) as prof:
            for i in range(steps):
                for _ in range(i + 1):
                    a * 2
                prof.step()
    return traces


@pytest.mark.parametrize("kwargs", SCHEDULES, ids=str)
def test_recorded_steps_match_torch(kwargs):
    torch = pytest.importorskip("torch", reason=REASON)
    import torch.profiler

    ours = _recorded_steps(edutorch, edutorch.profiler, kwargs)
    assert ours == _recorded_steps(torch, torch.profiler, kwargs)
    assert ours  # something was recorded


def test_recorded_steps_without_torch():
    # wait 1, warmup 1, active 2: steps 2-3 and 6-7 are recorded; each ready at the step after
    assert _recorded_steps(edutorch, edutorch.profiler, dict(wait=1, warmup=1, active=2)) == \
        [(4, 3 + 4, 2), (8, 7 + 8, 2)]
    assert ProfilerAction.RECORD_AND_SAVE.name == "RECORD_AND_SAVE"
    assert ProfilerActivity.CPU in edutorch.profiler.supported_activities()


def test_tensorboard_trace_handler_writes_traces(tmp_path):
    handler = edutorch.profiler.tensorboard_trace_handler(str(tmp_path), worker_name="w")
    with profile(schedule=schedule(wait=0, warmup=1, active=1), on_trace_ready=handler) as prof:
        for _ in range(4):
            edutorch.ones(2) * 2
            prof.step()
    files = sorted(tmp_path.iterdir())
    assert len(files) == 2 and all(re.fullmatch(r"w\.\d+\.pt\.trace\.json", f.name) for f in files)
    names = {e["name"] for e in json.loads(files[0].read_text())["traceEvents"]}
    assert {"ProfilerStep#1", "aten::mul"} <= names


def test_tensorboard_trace_handler_gzip(tmp_path):
    import gzip

    handler = edutorch.profiler.tensorboard_trace_handler(str(tmp_path), worker_name="w", use_gzip=True)
    with profile(on_trace_ready=handler):
        edutorch.ones(2) * 2
    (path,) = tmp_path.iterdir()
    assert path.name.endswith(".pt.trace.json.gz")
    with gzip.open(path) as f:
        assert "aten::mul" in {e["name"] for e in json.load(f)["traceEvents"]}


def test_checkpoint_recomputation_is_recorded_inside_backward():
    from edutorch.utils.checkpoint import checkpoint

    edutorch.manual_seed(0)
    model = edutorch.nn.Sequential(edutorch.nn.Linear(4, 8), edutorch.nn.ReLU(), edutorch.nn.Linear(8, 2))
    x = edutorch.randn(3, 4, requires_grad=True)
    with profile() as prof:
        with record_function("forward"):
            out = checkpoint(model, x, use_reentrant=False)
        with record_function("backward"):
            out.sum().backward()
    forward = [e for e in prof.events() if e.name == "aten::linear" and e.cpu_parent.name == "forward"]
    assert len(forward) == 2
    recomputed = [e for e in prof.events() if e.name == "aten::linear" and e.cpu_parent.name != "forward"]
    assert len(recomputed) == 2  # run again when backward first unpacks a saved tensor
    for event in recomputed:
        while event.cpu_parent.name != "backward":
            event = event.cpu_parent
        assert event.name.startswith(EVALUATE)
