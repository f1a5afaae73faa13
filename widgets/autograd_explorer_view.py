"""View of the autograd-graph widget: ``AutogradExplorer``.

Pick a function of one variable and move ``x``: for each ``x`` the widget
builds ``y = f(x)``, calls ``y.backward()`` and draws, on the left, the curve
with its tangent (whose slope is ``x.grad``) and, on the right, the backward
graph that ``backward`` walked (``autograd_graph.backward_graph``).

Each function's curve and graph are rendered once (ahead, in the kernel's idle
time after the widget is shown) and kept; moving ``x`` or picking another function only runs
backward and redraws the tangent on top of that cached background (matplotlib
"blitting"), so both controls stay live.  The figure is shown as PNG bytes in a
``widgets.Image`` (see ``_render.py`` for why).
"""
from __future__ import annotations

import ipywidgets as widgets
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch
from matplotlib.path import Path

from ._render import (CSS_DPI, PIXEL_RATIO, PictureFallback, css_width, font_size, png_bytes,
                      RenderAhead)
from .autograd_graph import backward_graph
from .graph_groups import GroupedGraph

#: the functions offered by default, written with tensor methods so any library works
FUNCTIONS = {
    "x · tanh(2x)": lambda x: (2 * x).tanh() * x,
    "x³ − 3x": lambda x: x**3 - 3 * x,
    "sigmoid(x) + 0.1 x²": lambda x: x.sigmoid() + 0.1 * x**2,
    "exp(−x²)": lambda x: (-(x * x)).exp(),
}


NODE_COLOURS = {"node": "#caf0f8", "leaf": "#ffd6a5", "group": "#e4d4f4"}
EDGE_COLOUR = "#555555"
LEGEND_ROOM = 0.3  # of the curve's height, left free above it for the legend
MAX_BACKGROUNDS = 12  # rendered pictures kept (functions x groupings): ~5 MB each at 2x


def draw_graph(ax, nodes, edges, title="backward graph of y (y.grad_fn at the top)", grouped=None):
    """Boxes for the nodes (or groups of nodes), arrows with heads for the edges.

    Leaves (AccumulateGrad) are orange; a box that hides several nodes (see
    ``graph_groups.GroupedGraph``) is lilac, dashed and numbered ``[1]``,
    ``[2]``, ... as in the view's "expand" menu. Boxes have a fixed size in
    data units and every arrow ends on a box's edge at a point of its own, so
    no arrowhead is hidden under a box or under another head. Returns the
    ``GroupedGraph``.
    """
    grouped = grouped or GroupedGraph(nodes, edges)
    groups, rows = grouped.groups(), grouped.rows()
    numbers = {g.key: i + 1 for i, g in enumerate(grouped.collapsed_groups())}
    in_row = {}
    for i, r in enumerate(rows):  # groups() is sorted by row, then column
        in_row.setdefault(r, []).append(i)
    widest = max(len(row) for row in in_row.values())
    box_w, box_h = min(0.45, 0.86 / widest), 0.56
    where = [None] * len(groups)
    for r, row in in_row.items():
        for k, i in enumerate(row):
            where[i] = ((k + 0.5) / len(row), -r)
    _draw_edges(ax, grouped.group_edges(), where, box_w, box_h)
    fig_w, fig_h = ax.figure.get_size_inches()
    box = ax.get_position()
    n_rows = len(in_row)
    box_pt = (box_w * box.width * fig_w * 72, box_h / n_rows * box.height * fig_h * 72)
    for g, (x, y) in zip(groups, where):
        colour = NODE_COLOURS["group" if g.collapsed else "leaf" if g.is_leaf else "node"]
        ax.add_patch(FancyBboxPatch((x - box_w / 2, y - box_h / 2), box_w, box_h,
                                    boxstyle="square,pad=0", fc=colour, ec="#333333",
                                    lw=1.2, ls="--" if g.collapsed else "-", zorder=2))
        label = g.label + ("\n(writes x.grad)" if g.is_leaf else "")
        if g.collapsed:
            label = f"[{numbers[g.key]}] {label}"
        ax.text(x, y, label, ha="center", va="center", zorder=3,
                fontsize=_fitting_font(label, *box_pt))
    ax.set_xlim(0, 1)
    ax.set_ylim(-n_rows + 0.5, 0.5)
    ax.set_axis_off()
    ax.set_title(title, fontsize=font_size("title"))
    return grouped


def _draw_edges(ax, group_edges, where, box_w, box_h):
    """The arrows, drawn under the boxes.

    An arrow between neighbouring rows leaves its own slot on the parent's
    bottom edge and enters its own slot on the child's top edge (slots ordered
    left to right, so arrows do not cross needlessly); ``x * x`` gives two
    arrows, more edges between two boxes one thicker arrow. An arrow that skips
    rows leaves its box sideways and runs down a lane outside every box of the
    rows it passes, into the side of the other box: it never crosses a box.
    """
    arrows = [e for e in group_edges for _ in range(e.count if e.count <= 2 else 1)]
    outgoing, incoming = {}, {}
    for a, e in enumerate(arrows):
        if where[e.parent][1] - where[e.child][1] <= 1:
            outgoing.setdefault(e.parent, []).append(a)
            incoming.setdefault(e.child, []).append(a)
    ends = {}
    for slots, side, other in ((outgoing, -1, "child"), (incoming, 1, "parent")):
        for box, used in slots.items():
            used.sort(key=lambda a: where[getattr(arrows[a], other)][0])
            x, y = where[box]
            for k, a in enumerate(used):
                offset = (k + 1) / (len(used) + 1) - 0.5
                ends[a, side] = (x + 0.8 * box_w * offset, y + side * box_h / 2)
    lanes = {-1: 0, 1: 0}  # row-skipping arrows already routed on each side
    for a, e in enumerate(arrows):
        style = dict(arrowstyle="-|>", mutation_scale=14, color=EDGE_COLOUR, shrinkA=0,
                     shrinkB=0, zorder=1, lw=1.2 + 0.5 * np.log2(e.count if e.count > 2 else 1))
        if (a, 1) in ends:
            ax.add_patch(FancyArrowPatch(ends[a, -1], ends[a, 1], **style))
            continue
        side = _outer_side(where, e.parent, e.child)
        lane = _lane(where, e.parent, e.child, side, box_w) + side * 0.025 * lanes[side]
        lanes[side] += 1
        (x0, y0), (x1, y1) = where[e.parent], where[e.child]
        corners = [(x0 + side * box_w / 2, y0), (lane, y0), (lane, y1), (x1 + side * box_w / 2, y1)]
        ax.add_patch(FancyArrowPatch(path=Path(corners), clip_on=False, **style))


def _outer_side(where, parent, child):
    """-1 (left) or 1 (right): the side of the layout an arrow that skips rows goes round,
    the one where neither end has a box beside it (else the parent's nearer side)."""
    def outermost(i, side):
        x, y = where[i]
        return all(side * (x - other_x) >= 0 for other_x, other_y in where if other_y == y)
    for side in (1, -1):
        if outermost(parent, side) and outermost(child, side):
            return side
    return -1 if where[parent][0] < 0.5 else 1


def _lane(where, parent, child, side, box_w):
    """The x of the vertical run of an arrow that skips rows: just outside every box of the
    rows it passes (its ends' rows included), so it runs through no box."""
    low, high = sorted((where[parent][1], where[child][1]))
    edges = [x + side * box_w / 2 for x, y in where if low <= y <= high]
    return (max(edges) if side > 0 else min(edges)) + side * 0.03


def _fitting_font(label, width_pt, height_pt):
    """The title size, or smaller so that ``label`` fits a box of that many points."""
    lines = label.split("\n")
    by_width = width_pt / (0.62 * max(len(line) for line in lines))
    by_height = height_pt / (1.35 * len(lines))
    return max(5.0, min(font_size("label"), by_width, by_height))


class AutogradExplorer(PictureFallback, widgets.VBox):
    """A dropdown of functions and a slider for ``x``, bound to one figure.

    ``torch`` is the library to run: ``edutorch``, or real PyTorch (the widget
    uses only the API the two share); ``functions`` maps names to
    ``f(x_tensor) -> y_tensor``. A big graph is drawn with groups of nodes
    collapsed (``graph_groups``): pick one in the "expand" menu to open it,
    "collapse all" to go back.
    """

    def __init__(self, torch, functions=None, x=0.5, x_range=(-2.0, 2.0)):
        self.torch = torch
        self.functions = dict(functions or FUNCTIONS)
        self.x_range = x_range
        self.function = widgets.Dropdown(options=list(self.functions), description="f(x)")
        self.x = widgets.FloatSlider(value=x, min=x_range[0], max=x_range[1], step=0.05, description="x")
        self.expand = widgets.Dropdown(options=[("—", None)], value=None, description="expand",
                                       layout=widgets.Layout(width="420px"))
        self.collapse_button = widgets.Button(description="collapse all", icon="compress")
        self.group_controls = widgets.HBox([self.expand, self.collapse_button])
        self.figure = Figure(figsize=(8.6, 3.8), dpi=CSS_DPI * PIXEL_RATIO)
        FigureCanvasAgg(self.figure)
        self.image = widgets.Image(format="png", layout=widgets.Layout(width=css_width(self.figure)))
        self.summary = widgets.Label()
        super().__init__([widgets.HBox([self.function, self.x]), self.group_controls,
                          self.summary, self.image])
        self.backgrounds = {}  # (function, expanded groups) -> (picture, y limits)
        self.function.observe(self.draw_function, names="value")
        self.x.observe(self.move_x, names="value")
        self.expand.observe(self._expand_chosen, names="value")
        self.collapse_button.on_click(lambda _: self._regroup(self.grouped.reset))
        self.draw_function()
        self._prerender()

    @property
    def f(self):
        return self.functions[self.function.value]

    def draw_function(self, change=None):
        """A new function: build its backward graph (all groups collapsed) and draw it."""
        self.nodes, self.edges, self.grouped = self._graph_of(self.function.value)
        self.draw_static()

    def _graph_of(self, name):
        """``(nodes, edges, GroupedGraph)`` of the backward graph of ``functions[name]``."""
        x = self.torch.tensor(self.x.value, requires_grad=True)
        nodes, edges = backward_graph(self.functions[name](x).grad_fn)
        return nodes, edges, GroupedGraph(nodes, edges)

    def draw_static(self):
        """The static picture: the curve ``y = f(x)`` and the (grouped) backward graph.

        Rendered once per function and grouping, then kept (``_render.py``'s blitting): a
        function picked again in the dropdown costs what a move of the slider does.
        """
        key = (self.function.value, frozenset(self.grouped.expanded))
        if key not in self.backgrounds:
            self._render_background(self.function.value, self.nodes, self.edges, self.grouped)
        self.background, self.y_limits = self.backgrounds[key]
        self._sync_expand_menu()
        self.move_x()

    def _prerender(self):
        """Render every other function's picture ahead (``RenderAhead``: in the kernel's
        idle time), so that changing ``f(x)`` in the dropdown only pastes a picture."""
        def render(name):
            return lambda: self._render_background(name, *self._graph_of(name))

        RenderAhead().schedule(render(name) for name in list(self.functions)[:MAX_BACKGROUNDS]
                               if name != self.function.value)

    def _render_background(self, name, nodes, edges, grouped):
        """Draw the curve of ``functions[name]`` and its graph; keep the picture, without
        the tangent, in ``backgrounds`` under ``(name, expanded groups)``."""
        if (name, frozenset(grouped.expanded)) in self.backgrounds:
            return
        torch = self.torch
        lo, hi = self.x_range[0] - 0.5, self.x_range[1] + 0.5
        xs = torch.linspace(lo, hi, 201)
        with torch.no_grad():  # the curve itself needs no graph
            ys = self.functions[name](xs).numpy()
        self.figure.clear()
        left = self.left = self.figure.add_axes([0.07, 0.14, 0.33, 0.74])
        right = self.figure.add_axes([0.43, 0.02, 0.56, 0.86])
        left.plot(xs.numpy(), ys, color="#023e8a", lw=2, label="y = f(x)")
        self.tangent = left.plot([], [], "--", color="#e85d04", lw=2,
                                 label="tangent: slope x.grad", animated=True)[0]
        self.point = left.plot([], [], "o", color="#e85d04", markersize=9, animated=True)[0]
        left.set_xlim(lo, hi)
        # room above the curve for the legend, so that it never hides the curve
        left.set_ylim(ys.min() - 0.5, ys.max() + 0.5 + LEGEND_ROOM * (ys.max() - ys.min() + 1.0))
        left.set_xlabel("x", fontsize=font_size("label"))
        left.tick_params(labelsize=font_size("tick"))
        left.legend(fontsize=font_size("tick"), loc="upper left")
        left.set_title(name, fontsize=font_size("title"))
        draw_graph(right, nodes, edges, grouped=grouped)
        self.figure.canvas.draw()
        if len(self.backgrounds) >= MAX_BACKGROUNDS:  # many groupings expanded: forget the oldest
            self.backgrounds.pop(next(iter(self.backgrounds)))
        self.backgrounds[name, frozenset(grouped.expanded)] = (
            self.figure.canvas.copy_from_bbox(self.figure.bbox), left.get_ylim())

    def _sync_expand_menu(self):
        collapsed = self.grouped.collapsed_groups()
        options = [("—", None)] + [
            (f"[{i + 1}] " + g.label.replace("\n", " — "), g.key) for i, g in enumerate(collapsed)]
        self.expand.unobserve(self._expand_chosen, names="value")
        self.expand.options, self.expand.value = options, None
        self.expand.observe(self._expand_chosen, names="value")
        shown = bool(collapsed) or bool(self.grouped.expanded)
        self.group_controls.layout.display = None if shown else "none"

    def _expand_chosen(self, change):
        if change["new"] is not None:
            self._regroup(lambda: self.grouped.expand(change["new"]))

    def _regroup(self, action):
        action()
        self.draw_static()

    def move_x(self, change=None):
        """Run backward at the slider's ``x`` and draw the tangent whose slope is ``x.grad``."""
        x0 = self.x.value
        x = self.torch.tensor(x0, requires_grad=True)
        y = self.f(x)
        y.backward()
        self.y, self.slope = y.item(), x.grad.item()
        xs = np.array([self.x_range[0] - 0.5, self.x_range[1] + 0.5])
        self.tangent.set_data(xs, self.y + self.slope * (xs - x0))
        self.point.set_data([x0], [self.y])
        self.left.set_ylim(self.y_limits)  # the axes of the last render: this function's range
        canvas = self.figure.canvas
        canvas.restore_region(self.background)
        for artist in (self.tangent, self.point):
            artist.axes.draw_artist(artist)
        self.image.value = png_bytes(canvas)
        self.summary.value = f"x = {x0:.2f},  y = {self.y:.4f},  x.grad = dy/dx = {self.slope:.4f}"

    def __repr__(self):  # a short text form for the notebook file (instead of the PNG bytes)
        return f"AutogradExplorer(f={self.function.value!r}, x={self.x.value})"
