"""TangentTrace (pure Python) and the TangentStepper view: forward mode one fx node at a time,
on edutorch and on real PyTorch. Expected tangents come from float64 central differences."""
import numpy as np
import pytest
from widget_helpers import is_png, png_bytes

import edutorch as et
from widgets import TangentStepper, TangentTrace
from widgets.tangent_stepper import GENERAL_RULE, consumers, layout

EPS = 1e-6


@pytest.fixture(params=["edutorch", "torch"])
def lib(request):
    if request.param == "torch":
        return pytest.importorskip("torch", reason="real PyTorch not installed: torch traces skipped")
    return et


def shared(x, w):
    h = x * w
    return (h.sin() * h).sum()


def float64(lib, values):
    return lib.tensor(np.asarray(values, dtype=np.float64))


def central_difference(fn, primals, tangents):
    """(fn(p + eps t) - fn(p - eps t)) / 2 eps, the tangent forward mode must give."""
    def shifted(sign):
        args = [p if t is None else p + sign * EPS * t for p, t in zip(primals, tangents)]
        return fn(*args).numpy()
    return (shifted(+1) - shifted(-1)) / (2 * EPS)


def test_the_last_tangent_is_j_times_v(lib):
    primals = (float64(lib, [0.5, -1.0, 2.0]), float64(lib, [1.5, 0.5, -1.0]))
    tangents = (float64(lib, [1.0, -2.0, 0.5]), float64(lib, [0.0, 1.0, 3.0]))
    trace = TangentTrace(shared, primals, tangents)
    assert trace.order() == ["x", "w", "mul", "sin", "mul_1", "sum_1"]
    np.testing.assert_allclose(trace.output_primal, shared(*primals).numpy())
    np.testing.assert_allclose(trace.output_tangent, central_difference(shared, primals, tangents),
                               rtol=1e-6)
    last = trace.events[-1]
    np.testing.assert_allclose(last.tangent.values, trace.output_tangent)


def test_every_node_gets_the_tangent_of_its_own_value(lib):
    """Each recorded tangent is the derivative of that node's value along v (not only the last)."""
    x, w = float64(lib, [0.5, -1.0, 2.0]), float64(lib, [1.5, 0.5, -1.0])
    v = float64(lib, [1.0, 0.0, -1.0])
    trace = TangentTrace(shared, (x, w), (v, None))
    partial = {"mul": lambda x: x * w, "sin": lambda x: (x * w).sin(),
               "mul_1": lambda x: (x * w).sin() * (x * w)}
    for event in trace.events:
        name = trace.nodes[event.node].name
        if name in partial:
            np.testing.assert_allclose(event.tangent.values,
                                       central_difference(partial[name], (x,), (v,)), rtol=1e-6)


def test_an_input_without_a_tangent_carries_none_and_the_ops_on_it_too(lib):
    def fn(x, w):
        return (w * 2.0).exp() + x

    trace = TangentTrace(fn, (lib.tensor([1.0, 2.0]), lib.tensor([0.5, -1.0])),
                         (lib.tensor([1.0, 1.0]), None))
    tangents = {trace.nodes[e.node].name: e.tangent for e in trace.events}
    assert tangents["w"] is None and tangents["mul"] is None and tangents["exp"] is None
    np.testing.assert_allclose(tangents["add"].values, [1.0, 1.0])
    assert "None (no tangent: zero)" in "\n".join(trace.describe(2))


def test_nodes_inputs_users_and_rules(lib):
    trace = TangentTrace(shared, (lib.tensor([1.0, 2.0]), lib.tensor([3.0, 4.0])),
                         (lib.tensor([1.0, 0.0]), None))
    by_name = {n.name: n for n in trace.nodes}
    assert by_name["mul"].inputs == (0, 1) and by_name["mul"].users == 2
    assert by_name["mul_1"].inputs == (3, 2)
    assert consumers(trace, by_name["mul"].index) == [3, 4]
    assert by_name["x"].op == "placeholder" and by_name["sin"].op == "call_method"
    assert by_name["sin"].rule == "cos(x)·ẋ" and by_name["mul"].rule == "ẋ·y + x·ẏ"
    assert by_name["sum_1"].label == "sum"


def test_state_walks_forward_and_marks_waiting_nodes(lib):
    trace = TangentTrace(shared, (lib.tensor([1.0, 2.0]), lib.tensor([3.0, 4.0])),
                         (lib.tensor([1.0, 0.0]), None))
    states, current = trace.state(0)
    assert current is None and set(states) == {"pending"}
    states, current = trace.state(1)  # x seeded: mul, which reads it, is waiting
    assert states[0] == "current" and states[2] == "receiving" and states[3] == "pending"
    states, current = trace.state(len(trace.events))
    assert states[-1] == "current" and states[:-1] == ["done"] * (len(states) - 1)
    with pytest.raises(IndexError):
        trace.state(len(trace.events) + 1)


def test_describe_names_the_inputs_tangents_and_the_output():
    x, w = et.tensor([1.0, 2.0]), et.tensor([3.0, 4.0])
    trace = TangentTrace(shared, (x, w), (et.tensor([1.0, 0.0]), None))
    assert "make_dual" in "\n".join(trace.describe(0))
    text = "\n".join(trace.describe(3))
    assert "step 3: run node [2] mul on [0] x, [1] w" in text
    assert "tangent arriving from [0] x: 2, norm 1, max |·| 1" in text
    assert "rule: ẋ·y + x·ẏ" in text and "its tangent goes on to 2 nodes" in text
    assert "J·v, one Jacobian-vector product" in "\n".join(trace.describe(len(trace.events)))


def test_a_module_is_traced_with_one_node_per_layer(lib):
    lib.manual_seed(0)
    net = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 2)).double()
    x, v = float64(lib, [0.5, -1.0, 2.0]), float64(lib, [1.0, 0.0, 0.0])
    trace = TangentTrace(net, x, v)
    assert [n.what for n in trace.nodes] == ["input", "Linear (0)", "Tanh (1)", "Linear (2)"]
    assert trace.nodes[1].rule.startswith("ẋ·Wᵀ") and trace.nodes[2].rule.startswith("(1 − tanh²")
    with lib.no_grad():
        expected = central_difference(net, (x,), (v,))
    np.testing.assert_allclose(trace.output_tangent, expected, rtol=1e-6)


def test_an_op_without_a_listed_rule_shows_the_general_one():
    trace = TangentTrace(lambda x: x.abs(), et.tensor([1.0, -2.0]), et.tensor([1.0, 1.0]))
    assert trace.nodes[1].rule == GENERAL_RULE
    np.testing.assert_allclose(trace.output_tangent, [1.0, -1.0])


def test_primals_and_tangents_must_pair_up():
    with pytest.raises(ValueError, match="one tangent per primal"):
        TangentTrace(shared, (et.ones(2), et.ones(2)), (et.ones(2),))
    with pytest.raises(TypeError, match="edutorch or torch"):
        TangentTrace(lambda x: x, np.ones(2), np.ones(2))
    with pytest.raises(TypeError, match="fn must return one tensor, got tuple"):
        TangentTrace(lambda x: (x.sin(), x.cos()), et.ones(2), et.ones(2))


def test_layout_puts_inputs_on_top_and_arrows_down(lib):
    trace = TangentTrace(shared, (lib.tensor([1.0, 2.0]), lib.tensor([3.0, 4.0])),
                         (lib.tensor([1.0, 0.0]), None))
    lay = layout(trace)
    levels = [box.level for box in lay.boxes]
    assert levels == [0, 0, 1, 2, 3, 4]
    assert all(levels[a] < levels[b] for a, b, _ in lay.edges)
    assert lay.boxes[0].is_leaf and lay.boxes[2].shared and not lay.boxes[3].shared
    # mul -> mul_1 skips sin's level: sin moves left (2 slots) so that arrow stays visible
    assert (lay.boxes[3].column, lay.boxes[3].width) == (0, 2) and lay.boxes[4].width == 1


def test_edutorch_and_torch_record_the_same_trace():
    torch = pytest.importorskip("torch", reason="real PyTorch not installed: parity skipped")
    values = ([0.5, -1.0, 2.0], [1.5, 0.5, -1.0], [1.0, -2.0, 0.5])
    ours = TangentTrace(shared, tuple(float64(et, a) for a in values[:2]), (float64(et, values[2]), None))
    theirs = TangentTrace(shared, tuple(float64(torch, a) for a in values[:2]),
                          (float64(torch, values[2]), None))
    assert ours.order() == theirs.order()
    assert [n.what for n in ours.nodes] == [n.what for n in theirs.nodes]
    for a, b in zip(ours.events, theirs.events):
        np.testing.assert_allclose(a.primal.values, b.primal.values)
        assert (a.tangent is None) == (b.tangent is None)
        if a.tangent is not None:
            np.testing.assert_allclose(a.tangent.values, b.tangent.values)


def test_the_view_steps_and_stores_its_picture(lib):
    view = TangentStepper(shared, (lib.tensor([1.0, 2.0]), lib.tensor([3.0, 4.0])),
                          (lib.tensor([1.0, 0.0]), None))
    assert repr(view) == "TangentStepper(6 nodes, 6 steps)"
    first = png_bytes(view.image)
    view.next_button.click()
    view.next_button.click()
    assert view.slider.value == 2 and view.position.value == "step 2 / 6"
    assert png_bytes(view.image) != first and is_png(view.detail.value)
    view.slider.value = 6
    assert "J·v" in view.description.value and "tangent |max|" in view.caption.value
    view.next_button.click()  # stays at the end
    assert view.slider.value == 6
    view.prev_button.click()
    assert view.slider.value == 5
    stored, width = view.stored_png()
    assert is_png(stored) and width == view.fallback_png()[1]
    assert "image/png" in view._repr_mimebundle_()[0]


def test_the_view_shows_a_missing_tangent_as_none():
    view = TangentStepper(shared, (et.tensor([1.0, 2.0]), et.tensor([3.0, 4.0])),
                          (et.tensor([1.0, 0.0]), None))
    view.slider.value = 2  # w: no tangent
    assert "tangent |max|" not in view.caption.value and "primal |max| 4" in view.caption.value


def test_the_stored_picture_carries_the_title_step_and_scales():
    from widgets._render import plain_lines

    view = TangentStepper(shared, (et.tensor([1.0, 2.0]), et.tensor([3.0, 4.0])),
                          (et.tensor([1.0, 0.0]), None))
    view.slider.value = 3
    written = "\n".join(line for markup in view.fallback_text() for line in plain_lines(markup))
    for needle in ("TangentStepper —", "step 3 / 6", "node mul: primal |max| 8, tangent |max| 3"):
        assert needle in written, written
