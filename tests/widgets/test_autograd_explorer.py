"""AutogradExplorer: the backward-graph model and its headless view."""
import asyncio

import pytest

import edutorch as et
from widget_helpers import built_in_a_kernel, is_png, png_bytes
from widgets import AutogradExplorer, backward_graph
from widgets.autograd_graph import describe


def tanh_graph(lib):
    x = lib.tensor(0.5, requires_grad=True)
    return backward_graph(((2 * x).tanh() * x).grad_fn)


def test_graph_levels_put_every_arrow_downwards():
    nodes, edges = tanh_graph(et)
    assert [(n.name, n.level) for n in nodes] == [
        ("MulBackward0", 0), ("TanhBackward0", 1), ("MulBackward0", 2), ("AccumulateGrad", 3)]
    assert all(nodes[e.child].level > nodes[e.parent].level for e in edges)
    assert [n.is_leaf for n in nodes] == [False, False, False, True]
    # x is used twice: the root's input 1 skips straight to the leaf
    assert describe(nodes, edges).splitlines() == [
        "MulBackward0 -[0]-> TanhBackward0",
        "MulBackward0 -[1]-> AccumulateGrad",
        "TanhBackward0 -[0]-> MulBackward0",
        "MulBackward0 -[0]-> AccumulateGrad",
    ]


def test_a_node_reached_twice_gets_two_edges_and_one_box():
    x = et.tensor([1.0, 2.0], requires_grad=True)
    nodes, edges = backward_graph((x * x).grad_fn)
    assert [n.name for n in nodes] == ["MulBackward0", "AccumulateGrad"]
    assert [(e.parent, e.child, e.input_nr) for e in edges] == [(0, 1, 0), (0, 1, 1)]


def test_a_leaf_has_no_graph():
    with pytest.raises(ValueError, match="no grad_fn"):
        backward_graph(et.tensor(1.0).grad_fn)


def test_graph_matches_real_torch():
    torch = pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")
    ours, theirs = tanh_graph(et), tanh_graph(torch)
    assert ours == theirs
    a, b = et.tensor([1.0, 2.0], requires_grad=True), torch.tensor([1.0, 2.0], requires_grad=True)
    assert backward_graph(((a * a) + 1).exp().sum().grad_fn) == backward_graph(((b * b) + 1).exp().sum().grad_fn)


def test_view_reacts_to_the_function_and_the_slider():
    view = AutogradExplorer(et)
    assert is_png(png_bytes(view.image))
    first = png_bytes(view.image)
    view.function.value = "x³ − 3x"
    view.x.value = 1.0  # d/dx (x³ − 3x) = 3x² − 3 = 0 at x = 1: a flat tangent
    assert view.slope == pytest.approx(0.0, abs=1e-6)
    assert view.y == pytest.approx(-2.0)
    assert view.summary.value == "x = 1.00,  y = -2.0000,  x.grad = dy/dx = 0.0000"
    assert [n.name for n in view.nodes] == ["SubBackward0", "PowBackward0", "MulBackward0", "AccumulateGrad"]
    assert [(n.level, n.column) for n in view.nodes] == [(0, 0), (1, 0), (1, 1), (2, 0)]
    assert png_bytes(view.image) != first
    view.x.value = 2.0  # 3·4 − 3 = 9
    assert view.slope == pytest.approx(9.0)
    assert repr(view) == "AutogradExplorer(f='x³ − 3x', x=2.0)"


def test_view_runs_on_real_torch():
    torch = pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")
    view = AutogradExplorer(torch, x=0.25)
    ours = AutogradExplorer(et, x=0.25)
    assert view.slope == pytest.approx(ours.slope, rel=1e-6)
    assert [n.name for n in view.nodes] == [n.name for n in ours.nodes]


def test_a_function_picked_again_shows_the_picture_of_a_fresh_render():
    """Every function's picture is rendered when the widget is built and pasted when the
    dropdown picks it: the same pixels (tangent in that function's y range) as a widget
    that has only that function and rendered it just now."""
    from widgets.autograd_explorer_view import FUNCTIONS

    name = "x³ − 3x"
    view = asyncio.run(built_in_a_kernel(lambda: AutogradExplorer(et, x=0.3),
                                         lambda view: len(view.backgrounds) == len(FUNCTIONS)))
    assert {key[0] for key in view.backgrounds} == set(FUNCTIONS)
    view.function.value = name
    view.x.value = 1.1
    alone = AutogradExplorer(et, functions={name: FUNCTIONS[name]}, x=1.1)
    assert view.image.value == alone.image.value
    assert view.summary.value == alone.summary.value


@pytest.mark.parametrize("name", ["x · tanh(2x)", "x³ − 3x", "sigmoid(x) + 0.1 x²", "exp(−x²)"])
def test_the_legend_hides_no_part_of_the_curve(name):
    """The legend sits in the room left above the curve: no point of the curve lies
    under it (x · tanh(2x), high at both ends, once ran under it)."""
    import numpy as np

    view = AutogradExplorer(et, x=0.5)
    view.function.value = name
    view.figure.canvas.draw()
    renderer = view.figure.canvas.get_renderer()
    box = view.left.get_legend().get_window_extent(renderer)
    curve = view.left.get_lines()[0]
    points = view.left.transData.transform(np.column_stack(curve.get_data()))
    under = ((points[:, 0] >= box.x0) & (points[:, 0] <= box.x1)
             & (points[:, 1] >= box.y0) & (points[:, 1] <= box.y1))
    assert not under.any(), (name, points[under][:3])


@pytest.mark.parametrize("name", ["x · tanh(2x)", "sigmoid(x) + 0.1 x²", "x³ − 3x"])
def test_no_arrow_of_the_graph_runs_through_a_box(name):
    """An arrow that skips rows (sigmoid's input straight to AccumulateGrad) goes round the
    boxes of the rows it passes: no point of any arrow's line lies inside any box."""
    import numpy as np
    from matplotlib.figure import Figure
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

    from widgets.autograd_explorer_view import FUNCTIONS, draw_graph

    x = et.tensor(0.5, requires_grad=True)
    nodes, edges = backward_graph(FUNCTIONS[name](x).grad_fn)
    ax = Figure(figsize=(4.8, 3.3)).add_axes([0, 0, 1, 1])
    draw_graph(ax, nodes, edges)
    boxes = [p.get_bbox() for p in ax.patches if isinstance(p, FancyBboxPatch)]
    arrows = [p for p in ax.patches if isinstance(p, FancyArrowPatch)]
    assert len(boxes) == len(nodes) and len(arrows) == len(edges)
    eps = 1e-3
    for arrow in arrows:
        shaft = arrow.get_path().to_polygons(closed_only=False)[0]  # then its head
        for a, b in zip(shaft[:-1], shaft[1:]):
            points = a + np.linspace(0, 1, 60)[:, None] * (b - a)
            for box in boxes:
                inside = ((points[:, 0] > box.x0 + eps) & (points[:, 0] < box.x1 - eps)
                          & (points[:, 1] > box.y0 + eps) & (points[:, 1] < box.y1 - eps))
                assert not inside.any(), (name, box)
