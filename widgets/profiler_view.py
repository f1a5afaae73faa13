"""The ipywidgets view of ``ProfilerSummary``: a bar chart of ``key_averages()``.

Layout::

    title: how many event names, the profile's total self CPU time
    [sort by ▾ self CPU time]  [rows ──●──]
    [ legend; horizontal bars: the top rows, largest on top, coloured by kind ]
    [ PyTorch's own table for the same sort key and row limit (text) ]

Each (sort key, row limit) is rendered once and kept; the pictures the controls
are likely to ask for next are rendered ahead in the kernel's idle time
(``_render.RenderAhead``), so the dropdown and the slider usually only send a
picture that is ready.
"""
from __future__ import annotations

import html

import ipywidgets as W
from matplotlib.patches import Patch

from ._render import CSS_DPI, Canvas, PictureFallback, RenderAhead, font_size, html_style
from .profiler_summary import KINDS, SORT_KEYS, ProfilerSummary, format_value

COLOURS = dict(zip(KINDS, ("#219ebc", "#f77f00", "#8d99ae")))
WIDTH_PX = 760  # CSS pixels: fits a notebook at its default width
ROW_INCHES = 0.26  # height of one bar's row at text scale 1
LEGEND_INCHES = 0.3  # the legend's row above the bars at text scale 1
MAX_PICTURES = 64  # (sort key, row limit) pictures kept, ~100 KB each


class ProfilerView(PictureFallback, W.VBox):
    """Bars of the ops that took the most time (or memory, or calls) in a profile.

    >>> with torch.profiler.profile() as prof:
    ...     model(x).sum().backward()
    >>> view = ProfilerView(prof)                 # or ProfilerView(prof.key_averages())
    >>> view.sort_by.value = "cpu_time_total"     # the dropdown
    >>> view.row_limit.value = 5                  # the slider
    """

    def __init__(self, profile_or_rows, sort_by="self_cpu_time_total", row_limit=10):
        self.model = ProfilerSummary(profile_or_rows)
        self.style = html_style()
        self.sort_by = W.Dropdown(options=[(label, key) for key, (label, _) in SORT_KEYS.items()],
                                  value=sort_by, description="sort by",
                                  layout=W.Layout(width="330px"))
        self.row_limit = W.IntSlider(value=min(row_limit, len(self.model)), min=1, max=len(self.model),
                                     description="rows", continuous_update=False,
                                     layout=W.Layout(width="330px"))
        self.title = W.HTML()
        self.image = W.Image(format="png", layout=W.Layout(width=f"{WIDTH_PX}px"))
        self.table = W.HTML(layout=W.Layout(width=f"{WIDTH_PX}px", overflow="auto"))
        self.canvas = None  # the figure of the picture on screen
        self.pictures = {}  # (sort key, row limit) -> (PNG, table HTML)
        self.ahead = RenderAhead()
        self.sort_by.observe(lambda change: self._draw(), names="value")
        self.row_limit.observe(lambda change: self._draw(), names="value")
        super().__init__([self.title, W.HBox([self.sort_by, self.row_limit]), self.image, self.table])
        self._draw()

    def __repr__(self):  # stable text for notebooks (nbval compares text/plain)
        return f"ProfilerView({len(self.model)} event names)"

    @property
    def rows(self):
        """The rows the chart shows now (``ProfileRow``), largest first."""
        return self.model.top(self.sort_by.value, self.row_limit.value)

    # -- drawing ----------------------------------------------------------------------
    def _draw(self):
        """Show the picture and table of the current sort key and row limit (rendered now, or
        earlier by ``RenderAhead``), then render ahead, once the controls are left alone,
        those they may ask for next: every other sort key at this row limit, one row more
        and one fewer."""
        rows = self.rows
        label, _ = SORT_KEYS[self.sort_by.value]
        self.title.value = (
            f"<b>ProfilerView</b> — {len(self.model)} event names; top {len(rows)} by "
            f"{html.escape(label)}")
        key = (self.sort_by.value, self.row_limit.value)
        if key not in self.pictures:
            self._render(*key)
            self.canvas = self._last_canvas  # the figure on screen (tests look at it)
        self.image.value, self.table.value = self.pictures[key]
        sort_by, limit = key
        ahead = [(other, limit) for other in SORT_KEYS] + [
            (sort_by, n) for n in (limit + 1, limit - 1) if 1 <= n <= len(self.model)]
        self.ahead.schedule(lambda k=k: self._render(*k) for k in ahead if k not in self.pictures)

    def _render(self, sort_by, row_limit):
        """Render the chart and table for one sort key and row limit into ``pictures``."""
        if (sort_by, row_limit) in self.pictures:
            return
        if len(self.pictures) >= MAX_PICTURES:  # forget the oldest
            self.pictures.pop(next(iter(self.pictures)))
        label, unit = SORT_KEYS[sort_by]
        png = self._chart(self.model.top(sort_by, row_limit), label, unit)
        table = html.escape(self.model.table(sort_by, row_limit))
        # white-space: pre: a row of PyTorch's table stays on one line (scroll sideways)
        self.pictures[sort_by, row_limit] = (
            png, f'<pre style="{self.style}; font-size: 11px; white-space: pre">{table}</pre>')

    def _chart(self, rows, label, unit):
        """A fresh figure each time: its height and left margin follow the rows' number and
        names. The legend sits above the bars (it never covers a bar or its number)."""
        tick = font_size("tick")
        legend = LEGEND_INCHES * tick / 10
        height = 1.0 + legend + ROW_INCHES * tick / 10 * len(rows)
        width = WIDTH_PX / CSS_DPI
        self._last_canvas = canvas = Canvas(ncols=1, width=width, height=height)
        figure = canvas.figure
        figure.clear()
        top = 1 - (0.15 + legend) / height
        ax = figure.add_axes([0.3, 0.55 / height, 0.5, top - 0.55 / height])
        values = [r.value for r in rows][::-1]  # barh draws bottom-up: largest on top
        ax.barh(range(len(rows)), values, color=[COLOURS[r.kind] for r in rows][::-1])
        ax.set_yticks(range(len(rows)), [r.label for r in rows][::-1], fontsize=tick)
        # the left margin is the widest name, measured as drawn (long names are never cut off)
        renderer = figure.canvas.get_renderer()
        name_inches = max(label.get_window_extent(renderer).width for label in ax.get_yticklabels())
        name_inches = name_inches / figure.dpi + 0.15
        ax.set_position([name_inches / width, 0.55 / height, max(0.2, 1 - (name_inches + 0.9) / width),
                         top - 0.55 / height])
        ax.set_ylim(-0.6, len(rows) - 0.4)
        largest = max((abs(v) for v in values), default=0) or 1
        ax.set_xlim(min(0, min(values)) * 1.05, largest * 1.05)
        for y, value in enumerate(values):
            ax.text(value if value > 0 else 0, y, " " + format_value(value, unit), va="center",
                    fontsize=tick * 0.9, clip_on=False)
        ax.tick_params(axis="x", labelsize=tick)
        ax.set_xlabel(label + {"time": " (µs)", "bytes": " (bytes)", "count": ""}[unit],
                      fontsize=font_size("label"))
        ax.spines[["top", "right"]].set_visible(False)
        kinds = [k for k in KINDS if any(r.kind == k for r in rows)]
        ax.legend(handles=[Patch(color=COLOURS[k], label=k) for k in kinds], fontsize=tick * 0.9,
                  loc="lower left", bbox_to_anchor=(0, 1), ncol=len(kinds), frameon=False,
                  borderaxespad=0.2, handlelength=1.2, columnspacing=1.2)
        return canvas.png()
