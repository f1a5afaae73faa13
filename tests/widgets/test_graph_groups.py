"""GroupedGraph: big backward graphs collapsed into a few boxes, and the view that draws them."""
import numpy as np
import pytest
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

import edutorch as et
import edutorch.nn as nn
from widget_helpers import is_png, png_bytes
from widgets import AutogradExplorer, backward_graph
from widgets.autograd_explorer_view import draw_graph
from widgets.graph_groups import MAX_GROUPS, MAX_ROWS, GroupedGraph


def branches(x, count=25, steps=26):
    """~2,000 nodes: ``count`` chains of ``steps`` (mul, add, tanh) summed one by one."""
    total = x * 0
    for _ in range(count):
        h = x
        for _ in range(steps):
            h = (h * 1.01 + 0.01).tanh()
        total = total + h
    return total


def deep_mlp_graph(layers=300):
    et.manual_seed(0)
    model = nn.Sequential(*[m for _ in range(layers) for m in (nn.Linear(3, 3), nn.Tanh())])
    return backward_graph(model(et.randn(2, 3)).pow(2).mean().grad_fn)


def check_partition(grouped, nodes):
    members = sorted(m for g in grouped.groups() for m in g.members)
    assert members == list(range(len(nodes))), "every node in exactly one box"


def check_arrows_point_down(grouped):
    rows = grouped.rows()
    assert all(rows[e.child] > rows[e.parent] for e in grouped.group_edges())


def test_a_small_graph_is_drawn_node_by_node():
    x = et.tensor(0.5, requires_grad=True)
    nodes, edges = backward_graph(((2 * x).tanh() * x).grad_fn)
    grouped = GroupedGraph(nodes, edges)
    assert [g.label for g in grouped.groups()] == [n.name for n in nodes]
    assert grouped.collapsed_groups() == []
    assert grouped.rows() == [0, 1, 2, 3]
    assert len(grouped.group_edges()) == len(edges)


def test_two_thousand_nodes_fit_in_a_few_rows_and_expand():
    x = et.tensor(0.5, requires_grad=True)
    nodes, edges = backward_graph(branches(x).grad_fn)
    assert len(nodes) > 1900
    grouped = GroupedGraph(nodes, edges)
    assert len(grouped.groups()) <= MAX_GROUPS and len(set(grouped.rows())) <= MAX_ROWS
    check_partition(grouped, nodes)
    check_arrows_point_down(grouped)
    before = len(grouped.groups())
    opened = max(grouped.collapsed_groups(), key=lambda g: len(g.members))
    grouped.expand(opened.key)
    assert opened not in grouped.groups() and len(grouped.groups()) > before
    check_partition(grouped, nodes)
    check_arrows_point_down(grouped)
    chains = [g for g in grouped.groups() if g.kind == "chain"]
    assert chains and all(len(g.members) == 78 for g in chains)  # 26 x (mul, add, tanh)
    grouped.collapse(opened.key)
    assert len(grouped.groups()) == before
    with pytest.raises(KeyError, match="no collapsed group"):
        grouped.expand((10**6, 1))


def test_a_deep_mlp_is_one_chain_of_layers_that_opens_piece_by_piece():
    nodes, edges = deep_mlp_graph()
    grouped = GroupedGraph(nodes, edges)
    (chain,) = grouped.groups()
    assert chain.kind == "chain" and len(chain.members) == len(nodes)
    assert "chain of" in chain.label and "Addmm×300" in chain.label
    grouped.expand(chain.key)
    parts = grouped.groups()
    assert 1 < len(parts) <= 5
    check_partition(grouped, nodes)
    # a layer (Addmm with its weight's T -> AccumulateGrad and its bias) is never cut in two
    for part in parts:
        names = [nodes[m].name for m in part.members]
        assert names.count("AccumulateGrad") == 2 * names.count("AddmmBackward0")


def test_opening_every_box_shows_every_node():
    nodes, edges = deep_mlp_graph(layers=12)
    grouped = GroupedGraph(nodes, edges)
    assert len(grouped.groups()) < len(nodes)
    while grouped.collapsed_groups():  # open everything, one box at a time
        grouped.expand(grouped.collapsed_groups()[0].key)
        check_partition(grouped, nodes)
    assert [g.label for g in grouped.groups()] == [n.name for n in nodes]


def test_drawn_arrows_have_heads_that_touch_a_box_edge():
    """Each arrow ends on the edge of its child box (its head is not hidden under a box)."""
    for nodes, edges in (backward_graph((et.tensor([1.0, 2.0], requires_grad=True) ** 2).sum()
                                        .grad_fn),
                         backward_graph(branches(et.tensor(0.5, requires_grad=True)).grad_fn)):
        figure = Figure(figsize=(5, 4))
        ax = figure.add_subplot()
        grouped = draw_graph(ax, nodes, edges)
        arrows = [p for p in ax.patches if isinstance(p, FancyArrowPatch)]
        boxes = [p for p in ax.patches if isinstance(p, FancyBboxPatch)]
        assert len(boxes) == len(grouped.groups()) and len(arrows) >= len(grouped.group_edges())
        for arrow in arrows:
            assert type(arrow.get_arrowstyle()).__name__ == "CurveFilledB"  # "-|>": a head
            # a straight arrow is made from its two ends, one that skips rows from its path
            ends = arrow._posA_posB or arrow._path_original.vertices[[0, -1]]
            end = np.array(ends[1])
            on_edge = [b for b in boxes if _on_boundary(b, end)]
            assert on_edge, f"arrow ends at {end}, on no box edge"
            assert arrow.get_zorder() < boxes[0].get_zorder()


def _on_boundary(box, point, tol=1e-9):
    x0, y0, w, h = box.get_x(), box.get_y(), box.get_width(), box.get_height()
    inside = x0 - tol <= point[0] <= x0 + w + tol and y0 - tol <= point[1] <= y0 + h + tol
    edge = min(abs(point[0] - x0), abs(point[0] - x0 - w), abs(point[1] - y0),
               abs(point[1] - y0 - h)) < 1e-6
    return inside and edge


def test_explorer_expands_groups_from_its_menu():
    view = AutogradExplorer(et, functions={"2,000 nodes": branches, "x²": lambda x: x * x})
    assert view.group_controls.layout.display is None  # the menu is shown for a big graph
    options = [key for _, key in view.expand.options if key is not None]
    assert len(options) == len(view.grouped.collapsed_groups()) > 0
    before = png_bytes(view.image)
    view.expand.value = options[0]
    assert options[0] in view.grouped.expanded and view.expand.value is None
    assert is_png(png_bytes(view.image)) and png_bytes(view.image) != before
    view.collapse_button.click()
    assert view.grouped.expanded == set()
    view.function.value = "x²"
    assert view.group_controls.layout.display == "none"  # nothing to expand
    assert view.slope == pytest.approx(1.0)


def test_tight_limits_still_open_down_to_single_nodes():
    """Whatever the limits, every open step shows smaller boxes (never the same one again)."""
    x = et.tensor(0.5, requires_grad=True)
    nodes, edges = backward_graph(((x * 2).tanh() * 3 + (x * 5).sin() * x).exp().grad_fn)
    grouped = GroupedGraph(nodes, edges, max_groups=2, max_rows=2, max_width=2)
    assert len(grouped.groups()) <= 2
    for _ in range(len(nodes)):
        if not grouped.collapsed_groups():
            break
        biggest = max(grouped.collapsed_groups(), key=lambda g: len(g.members))
        grouped.expand(biggest.key)
        check_partition(grouped, nodes)
    assert len(grouped.groups()) == len(nodes)
