"""BackwardTrace (pure Python) and the BackwardStepper view, driven headlessly."""
import io

import numpy as np
import pytest
from PIL import Image
from widget_helpers import copy_weights, is_png, mlp, png_bytes

import edutorch as et
import edutorch.nn as nn
from widgets import BackwardStepper, BackwardTrace, ModuleScopes, TangentStepper
from widgets._render import PIXEL_RATIO
from widgets.backward_stepper import box_states, compare_orders, layout
from widgets.backward_stepper_view import WIDTH_PX, WINDOW_PX

RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 3)).astype(np.float32)
W1 = RNG.standard_normal((5, 3)).astype(np.float32)
W2 = RNG.standard_normal((2, 5)).astype(np.float32)
B = RNG.standard_normal(5).astype(np.float32)


# -- graphs built the same way in both libraries -----------------------------------------
def shared_subexpression(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    w = lib.tensor([0.5, -1.0], requires_grad=True)
    h = x * w
    h.retain_grad()
    return (h * h + h.exp() + x).sum(), {"x": x, "w": w, "h": h}


def two_layer_tanh(lib):
    x = lib.tensor(X, requires_grad=True)
    w1, w2, b = (lib.tensor(a, requires_grad=True) for a in (W1, W2, B))
    h = (x @ w1.t() + b).tanh()
    return ((h @ w2.t()) ** 2).mean() + 0.1 * (w1 * w1).sum(), {"x": x, "w1": w1, "w2": w2,
                                                              "b": b, "h": h}


def sigmoid_reused(lib):
    a = lib.tensor([0.3, -0.2, 0.9], requires_grad=True)
    s = a.sigmoid()
    t = s * a
    return t.sum() * s.sum() + (t - s).pow(3).mean(), {"a": a, "s": s}


def relu_cross_entropy(lib):
    w1, w2 = lib.tensor(W1, requires_grad=True), lib.tensor(W2, requires_grad=True)
    logits = (lib.tensor(X) @ w1.t()).relu() @ w2.t()
    return lib.nn.functional.cross_entropy(logits, lib.tensor([0, 1, 1, 0])), {"w1": w1, "w2": w2}


GRAPHS = [shared_subexpression, two_layer_tanh, sigmoid_reused, relu_cross_entropy]


def test_a_leaf_used_twice_gets_both_gradients_summed_then_accumulated():
    x = et.tensor([1.0, -2.0, 3.0], requires_grad=True)
    trace = BackwardTrace((x * x).sum(), {"x": x})
    assert trace.order() == ["SumBackward0", "MulBackward0", "AccumulateGrad(x)"]
    mul, leaf = trace.events[1], trace.events[-1]
    assert [child for child, _ in mul.sent] == [2, 2]  # both inputs of x * x are x
    assert leaf.kind == "node" and trace.nodes[leaf.node].is_leaf
    assert len(leaf.contributions) == 2
    total = sum(record.values for _, record in leaf.contributions)
    np.testing.assert_allclose(leaf.arriving[0].values, total)
    np.testing.assert_allclose(leaf.grad_after.values, 2 * x.detach().numpy())
    assert leaf.grad_before is None
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.detach().numpy())  # backward really ran
    text = "\n".join(trace.describe(len(trace.events)))
    assert "2 gradients arrived and were summed (leaf used 2 times)" in text
    assert "x.grad = None  →  3, norm" in text


def test_accumulation_adds_to_an_existing_grad():
    x = et.tensor([1.0, 2.0], requires_grad=True)
    (3 * x).sum().backward()
    trace = BackwardTrace((x * x).sum(), {"x": x})
    leaf = trace.events[-1]
    np.testing.assert_allclose(leaf.grad_before.values, [3.0, 3.0])
    np.testing.assert_allclose(leaf.grad_after.values, [3.0 + 2.0, 3.0 + 4.0])


def test_events_shared_subexpression_retained_and_no_hooks_of_the_stepper_shown():
    output, tensors = shared_subexpression(et)
    trace = BackwardTrace(output, tensors)
    h_node = next(n for n in trace.nodes if n.tensor == "h")
    assert h_node.retained and h_node.uses == 3 and h_node.label == "MulBackward0 (h)"
    # one step per node: the stepper watches with node hooks only, so no hook of its own
    # shows up as if the student had registered it
    assert [e.kind for e in trace.events] == ["node"] * len(trace.nodes)
    assert not any("register_hook" in line for step in range(len(trace.events) + 1)
                   for line in trace.describe(step))
    at = next(e.index for e in trace.events if e.node == h_node.index)
    run_h = trace.events[at]
    assert len(run_h.contributions) == 3
    np.testing.assert_allclose(sum(r.values for _, r in run_h.contributions),
                               run_h.arriving[0].values, rtol=1e-6)
    np.testing.assert_allclose(tensors["h"].grad.numpy(), run_h.arriving[0].values)
    assert "h.grad is kept (retain_grad)" in "\n".join(trace.describe(at + 1))


def test_a_2000_node_trace_keeps_small_records_with_exact_statistics():
    x = et.randn(64, 256, requires_grad=True)
    total = x * 0
    for _ in range(20):
        h = x
        for _ in range(30):
            h = (h * 1.01 + 0.01).tanh()
        total = total + h
    trace = BackwardTrace(total.sum(), {"x": x})
    assert len(trace.nodes) > 1800
    record = trace.events[-1].grad_after  # x.grad: 64 x 256, kept as a subsample
    assert record.sampled and record.values.size <= 48 * 48
    assert record.stats.norm == pytest.approx(np.linalg.norm(x.grad.numpy()), rel=1e-6)
    kept = sum(r.values.nbytes for e in trace.events for r in e.arriving if r is not None)
    assert kept < 20 * 2**20  # the gradients themselves would be 120 MB


def test_sent_gradients_are_what_the_children_receive():
    output, tensors = two_layer_tanh(et)
    trace = BackwardTrace(output, tensors)
    for event in trace.node_events():
        sent = [record.values for e in trace.node_events() for child, record in e.sent
                if child == event.node and record is not None]
        if event.node:  # the root receives the seed 1.0 from backward itself
            np.testing.assert_allclose(sum(sent), event.arriving[0].values, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(trace.node_events()[0].arriving[0].values, 1.0)


@pytest.mark.parametrize("lib_name", ["edutorch", "torch"])
def test_a_single_edge_reuses_the_record_sent_and_a_changed_gradient_gets_its_own(lib_name):
    """A node with one incoming edge receives the tensor its parent sent: one record for
    both. A tensor hook that returns a new gradient breaks that identity: a new record."""
    lib = et if lib_name == "edutorch" else pytest.importorskip("torch", reason="parity")
    x = lib.tensor([1.0, -2.0, 0.5], requires_grad=True)
    h = (x * 3).tanh()
    h.register_hook(lambda g: g * 10)  # the student's hook: tanh's node receives 10 * g
    trace = BackwardTrace((h * 2).sum(), {"x": x, "h": h})
    assert trace.order() == ["SumBackward0", "MulBackward0", "TanhBackward0", "MulBackward0",
                             "AccumulateGrad(x)"]
    total, mul_by_2, tanh, mul_by_3, _ = trace.node_events()
    assert total.sent[0][1] is mul_by_2.arriving[0]  # reused
    assert tanh.sent[0][1] is mul_by_3.arriving[0]
    sent_to_tanh = mul_by_2.sent[0][1]
    assert tanh.arriving[0] is not sent_to_tanh  # the hook made a new tensor
    np.testing.assert_allclose(tanh.arriving[0].values, 10 * sent_to_tanh.values)
    np.testing.assert_allclose(tanh.arriving[0].stats.norm, 10 * sent_to_tanh.stats.norm,
                               rtol=1e-6)
    assert trace._in_flight == {}  # nothing held after the pass


def test_hooks_are_removed_after_the_pass():
    output, tensors = shared_subexpression(et)
    trace = BackwardTrace(output, tensors, retain_graph=True)
    count, first = len(trace.events), tensors["w"].grad.numpy().copy()
    output.backward()  # again, without the trace: nothing more is recorded
    assert len(trace.events) == count
    np.testing.assert_allclose(tensors["w"].grad.numpy(), 2 * first)


def test_states_from_start_to_end():
    output, tensors = two_layer_tanh(et)
    trace = BackwardTrace(output, tensors)
    states, current = trace.state(0)
    assert current is None and states[0] == "receiving" and set(states[1:]) == {"pending"}
    states, current = trace.state(1)
    assert states[0] == "current" and "receiving" in states
    states, _ = trace.state(len(trace.events))
    assert states.count("current") == 1 and set(states) <= {"done", "current"}
    with pytest.raises(IndexError, match="out of range"):
        trace.state(len(trace.events) + 1)


def test_bad_outputs_are_refused():
    with pytest.raises(ValueError, match="no grad_fn"):
        BackwardTrace(et.tensor(1.0, requires_grad=True))
    x = et.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="only for scalar outputs"):
        BackwardTrace(x * 2)


@pytest.mark.parametrize("graph", GRAPHS, ids=lambda g: g.__name__)
def test_execution_order_is_pytorchs(graph, real_torch):
    ours, theirs = BackwardTrace(*graph(et)), BackwardTrace(*graph(real_torch))
    assert compare_orders(ours.order(), theirs.order()), (ours.order(), theirs.order())
    assert [n.name for n in ours.nodes] == [n.name for n in theirs.nodes]
    assert {e.kind for e in ours.events} == {e.kind for e in theirs.events} == {"node"}
    for a, b in zip(ours.node_events(), theirs.node_events()):
        if not ours.nodes[a.node].is_leaf:  # AccumulateGrad ties may swap: compared below
            np.testing.assert_allclose(a.arriving[0].values, b.arriving[0].values, rtol=1e-5,
                                       atol=1e-6)
    leaves = lambda t: {t.nodes[e.node].tensor: e.grad_after.values for e in t.node_events()
                        if t.nodes[e.node].is_leaf}
    for name, values in leaves(ours).items():
        np.testing.assert_allclose(values, leaves(theirs)[name], rtol=1e-5, atol=1e-6)


def test_order_text_puts_ties_in_braces():
    trace = BackwardTrace(*shared_subexpression(et))
    assert trace.order_text() == (
        "SumBackward0 → AddBackward0 → AddBackward0 → ExpBackward0 → MulBackward0 → "
        "MulBackward0 → {AccumulateGrad(w), AccumulateGrad(x)}")


def test_compare_orders_lets_only_accumulate_grad_ties_differ():
    assert compare_orders(["A", "AccumulateGrad(x)", "AccumulateGrad(w)", "B"],
                          ["A", "AccumulateGrad(w)", "AccumulateGrad(x)", "B"])
    assert not compare_orders(["A", "B"], ["B", "A"])
    assert not compare_orders(["A", "AccumulateGrad(x)", "B"], ["A", "B", "AccumulateGrad(x)"])


# -- module groups ------------------------------------------------------------------------
def traced_mlp(lib, model):
    x = lib.tensor(np.random.default_rng(0).standard_normal((6, 20)).astype(np.float32))
    with ModuleScopes(model) as scopes:
        output = model(x)
    loss = lib.nn.functional.cross_entropy(output, lib.tensor([0, 1, 2, 3, 0, 1]))
    return BackwardTrace(loss, {"output": output}, scopes)


def test_nodes_grouped_by_the_module_that_made_them(small_mlp):
    trace = traced_mlp(et, small_mlp)
    assert trace.groups == ["0", "1", "2", "3", "4"]
    assert trace.group_classes == {"0": "Linear", "1": "ReLU", "2": "Linear", "3": "ReLU",
                                   "4": "Linear"}
    by_group = {g: sorted(n.name for n in trace.nodes if n.group == g) for g in trace.groups}
    assert by_group["1"] == ["ReluBackward0"]
    assert {"AccumulateGrad", "AddmmBackward0"} <= set(by_group["4"])
    leaves = {n.tensor for n in trace.nodes if n.is_leaf}
    assert leaves == {f"{i}.{p}" for i in (0, 2, 4) for p in ("weight", "bias")}
    outside = [n.name for n in trace.nodes if n.group is None]
    assert outside == ["NllLossBackward0", "LogSoftmaxBackward0"]
    assert len(small_mlp[0]._forward_hooks) == 0  # ModuleScopes removed its hooks


def test_groups_match_real_torch(small_mlp, real_torch):
    twin = copy_weights(real_torch, small_mlp, mlp(real_torch.nn))
    ours, theirs = traced_mlp(et, small_mlp), traced_mlp(real_torch, twin)
    assert ours.groups == theirs.groups
    # torch's Linear adds a TBackward0 node for weight.t(); every node sits in the same module
    strip = lambda t: sorted((n.group or "", n.name) for n in t.nodes if n.name != "TBackward0")
    assert strip(ours) == strip(theirs)
    assert compare_orders(ours.order(), [o for o in theirs.order() if o != "TBackward0"])


def test_layout_collapses_and_expands_groups(small_mlp):
    trace = traced_mlp(et, small_mlp)
    collapsed = layout(trace)
    assert [b.label for b in collapsed.boxes] == [
        "NllLossBackward0", "LogSoftmaxBackward0", "[+] 4: Linear, 3 nodes",
        "[+] 3: ReLU, 1 node", "[+] 2: Linear, 3 nodes", "[+] 1: ReLU, 1 node",
        "[+] 0: Linear, 3 nodes"]
    assert [b.level for b in collapsed.boxes] == list(range(7))
    one = layout(trace, expanded=("2",))
    assert len(one.boxes) == 7 - 1 + 3
    full = layout(trace, expanded=("*",))
    assert len(full.boxes) == len(trace.nodes)
    for lay in (collapsed, one, full):
        assert all(lay.boxes[b].level > lay.boxes[a].level for a, b, _ in lay.edges)
    states, _ = trace.state(3)
    assert box_states(collapsed, states)[:3] == ["done", "done", "current"]


def test_a_few_hundred_nodes_stay_a_short_chain_of_groups():
    et.manual_seed(0)
    model = mlp(nn, sizes=(20,) + (16,) * 60 + (4,))
    trace = traced_mlp(et, model)
    assert len(trace.nodes) > 240
    assert len(layout(trace).boxes) == len(trace.groups) + 2


# -- the view ------------------------------------------------------------------------------
def test_view_steps_through_backward():
    output, tensors = shared_subexpression(et)
    view = BackwardStepper(output, tensors)
    assert repr(view) == "BackwardStepper(8 nodes, 8 steps)"
    assert view.position.value == "step 0 / 8"
    assert view.expand.disabled  # no modules: nothing to group
    first = png_bytes(view.image)
    assert is_png(first) and is_png(view.detail.value)
    view.next_button.click()
    assert view.slider.value == 1 and "run node [0] SumBackward0" in view.description.value
    assert png_bytes(view.image) != first
    view.prev_button.click()
    view.prev_button.click()  # stays at 0
    assert view.slider.value == 0
    view.slider.value = 8
    view.next_button.click()  # stays at the end
    assert view.slider.value == 8
    assert "AccumulateGrad" in view.description.value and ".grad after" in view.caption.value
    assert "tensor hook" not in view.description.value


def test_view_groups_and_expands(small_mlp):
    x = et.randn(6, 20)
    view = BackwardStepper.for_model(small_mlp, x, et.tensor([0, 1, 2, 3, 0, 1]),
                                     nn.CrossEntropyLoss())
    assert [value for _, value in view.expand.options] == ["(none)", "0", "1", "2", "3", "4",
                                                           "(all)"]
    assert view.expand.options[1] == ("0: Linear", "0")
    assert len(view.graph_layout.boxes) == 7
    collapsed = png_bytes(view.image)
    view.expand.value = "0"
    assert len(view.graph_layout.boxes) == 9 and png_bytes(view.image) != collapsed
    view.expand.value = "(all)"
    assert len(view.graph_layout.boxes) == len(view.trace.nodes)
    view.slider.value = 5
    assert is_png(view.image.value)


def test_view_crops_a_tall_graph_around_the_current_node():
    et.manual_seed(0)
    model = mlp(nn, sizes=(20,) + (16,) * 20 + (4,))
    view = BackwardStepper.for_model(model, et.randn(4, 20))
    view.expand.value = "(all)"
    view.slider.value = view.slider.max
    image = Image.open(io.BytesIO(png_bytes(view.image)))
    assert image.size == (WIDTH_PX * PIXEL_RATIO, WINDOW_PX * PIXEL_RATIO)  # 2x, cropped


def test_view_on_real_torch(small_mlp, real_torch):
    twin = copy_weights(real_torch, small_mlp, mlp(real_torch.nn))
    view = BackwardStepper.for_model(twin, real_torch.randn(6, 20))
    view.slider.value = view.slider.max
    assert is_png(view.image.value) and view.trace.groups == ["0", "1", "2", "3", "4"]


def test_both_gradient_pictures_share_one_scale():
    """y = 3 * x: the gradient sent on is three times the one arriving, and must look it."""
    x = et.tensor([1.0, -2.0, 0.5, 4.0], requires_grad=True)
    h = x * 1.0
    view = BackwardStepper((h * 3.0).sum(), {"x": x})
    step = next(e.index for e in view.trace.events
                if view.trace.nodes[e.node].name == "MulBackward0"
                and e.arriving[0].values.max() == 1.0) + 1
    view.slider.value = step
    left = view.left_panel.artists["bars"].get_data().values
    right = view.right_panel.artists["bars"].get_data().values
    np.testing.assert_allclose(right, 3 * left)
    assert left.max() == pytest.approx(1 / 3) and "one scale: ±3" in view.caption.value


def backward_stepper():
    output, tensors = shared_subexpression(et)
    return BackwardStepper(output, tensors)


def tangent_stepper():
    def fn(x, w):
        h = x * w
        return (h.sin() * h).sum()
    return TangentStepper(fn, (et.tensor([1.0, 2.0]), et.tensor([3.0, 4.0])),
                          (et.tensor([1.0, 0.0]), None))


STEPPERS = [backward_stepper, tangent_stepper]  # both are StepperViews


@pytest.mark.parametrize("build", STEPPERS, ids=lambda build: build.__name__)
def test_the_neighbour_steps_are_rendered_ahead_while_the_controls_rest(build):
    """In a kernel, once the controls rest, the next and previous steps' pictures are
    rendered and kept: they are the pictures a fresh stepper draws at those steps."""
    import asyncio

    from widget_helpers import built_in_a_kernel

    def ready(view):
        return not view.ahead.pending and view.ahead.timer is None
    view = asyncio.run(built_in_a_kernel(build, ready))
    assert [step for _, step in view.rendered] == [0, 1]  # shown, then the next one

    def to_step_2():  # drawn now (not a neighbour of 0), in the kernel's event loop
        view.slider.value = 2
        return view
    view = asyncio.run(built_in_a_kernel(to_step_2, ready))
    assert sorted(step for _, step in view.rendered) == [0, 1, 2, 3]
    fresh = build()
    for step in (1, 3):
        fresh.slider.value = step
        assert view.rendered[(view._picture_key(), step)] == (
            bytes(fresh.image.value), fresh.caption.value, bytes(fresh.detail.value))


@pytest.mark.parametrize("build", STEPPERS, ids=lambda build: build.__name__)
def test_a_step_rendered_ahead_is_shown_without_drawing_again(build, monkeypatch):
    """Once the controls rest, the next step's pictures are ready: "next ▶" shows them
    without drawing anything (what a fresh stepper draws at that step), and "◀ prev"
    comes back to the step's own pictures."""
    import asyncio

    from widget_helpers import built_in_a_kernel

    view = asyncio.run(built_in_a_kernel(build, lambda view: not view.ahead.pending))
    first = (bytes(view.image.value), bytes(view.detail.value))

    def no_drawing(*args):
        raise AssertionError("drawn again")
    monkeypatch.setattr(view.canvas, "png", no_drawing)
    monkeypatch.setattr(view.picture, "png", no_drawing)
    view.next_button.click()
    fresh = build()
    fresh.slider.value = 1
    assert bytes(view.image.value) == bytes(fresh.image.value)
    assert bytes(view.detail.value) == bytes(fresh.detail.value)
    assert view.caption.value == fresh.caption.value
    view.prev_button.click()
    assert (bytes(view.image.value), bytes(view.detail.value)) == first


@pytest.mark.parametrize("build", STEPPERS, ids=lambda build: build.__name__)
def test_a_step_sends_its_pictures_before_its_text(build):
    """The browser shows each change as it arrives: the two pictures go first."""
    view = build()
    sent = []
    for name in ("image", "detail", "caption", "position", "description"):
        getattr(view, name).observe(lambda change, name=name: sent.append(name), names="value")
    view.next_button.click()
    assert sent == ["image", "detail", "caption", "position", "description"]


@pytest.mark.parametrize("build", STEPPERS, ids=lambda build: build.__name__)
def test_a_button_with_nowhere_to_go_is_disabled(build):
    view = build()
    assert view.prev_button.disabled and not view.next_button.disabled  # step 0
    view.next_button.click()
    assert not view.prev_button.disabled and not view.next_button.disabled
    view.slider.value = view.slider.max
    assert view.next_button.disabled and not view.prev_button.disabled


def test_the_arrows_of_the_gradients_sent_are_painted_red_from_the_node_to_its_children():
    output, tensors = shared_subexpression(et)
    view = BackwardStepper(output, tensors)
    red = (0xd6, 0x28, 0x28)  # SENT

    def pixels():
        return np.asarray(Image.open(io.BytesIO(bytes(view.image.value))).convert("RGB"))
    assert not (pixels() == red).all(axis=2).any()  # step 0: nothing sent yet
    view.slider.value = 1
    event = view.trace.events[0]
    current = view.graph_layout.box_of[event.node]
    children = {view.graph_layout.box_of[c] for c, g in event.sent if c is not None}
    assert children - {current}
    picture = pixels()
    for child in children - {current}:
        (x0, y0), (x1, y1) = view.picture._bottom(current), view.picture._top(child)
        middle = picture[(y0 + y1) // 2, (x0 + x1) // 2]
        assert tuple(middle) == red
