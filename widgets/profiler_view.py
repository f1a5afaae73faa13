"""The ipywidgets view of ``ProfilerSummary``: a bar chart of ``key_averages()``.

Layout::

    title: how many event names, the profile's total self CPU time
    [sort by ▾ self CPU time]  [rows ──●──]
    [ legend; horizontal bars: the top rows, largest on top, coloured by kind ]
    [ PyTorch's own table for the same sort key and row limit (text) ]

The bars are HTML that the browser draws (``bars_html``): a row of text and a
coloured box per event name, so the dropdown and the slider send a few
kilobytes of text, never a picture (matplotlib took ~180 ms of the kernel's
time to draw the names and numbers of one chart). The same chart is drawn with
matplotlib once, for the picture stored in the notebook (``fallback_png``),
which a notebook that is not trusted shows instead of the widget.
"""
from __future__ import annotations

import html

import ipywidgets as W
from matplotlib.patches import Patch

from ._render import CSS_DPI, Canvas, PictureFallback, font_size, html_style
from .profiler_summary import KINDS, SORT_KEYS, ProfilerSummary, format_value

COLOURS = dict(zip(KINDS, ("#219ebc", "#f77f00", "#8d99ae")))
WIDTH_PX = 760  # CSS pixels: fits a notebook at its default width
BAR_PX = 300  # CSS pixels of the longest bar in the HTML chart
ROW_INCHES = 0.26  # height of one bar's row at text scale 1 (stored picture)
LEGEND_INCHES = 0.3  # the legend's row above the bars at text scale 1 (stored picture)
UNITS = {"time": " (µs)", "bytes": " (bytes)", "count": ""}


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
        self.chart = W.HTML(layout=W.Layout(width=f"{WIDTH_PX}px", overflow="auto"))
        self.chart.add_class("edutorch-bars")  # the browser test finds the chart by it
        self.table = W.HTML(layout=W.Layout(width=f"{WIDTH_PX}px", overflow="auto"))
        self.canvas = None  # the figure of the stored picture, once ``fallback_png`` drew it
        self.sort_by.observe(lambda change: self._draw(), names="value")
        self.row_limit.observe(lambda change: self._draw(), names="value")
        super().__init__([self.title, W.HBox([self.sort_by, self.row_limit]), self.chart, self.table])
        self._draw()

    def __repr__(self):  # stable text for notebooks (nbval compares text/plain)
        return f"ProfilerView({len(self.model)} event names)"

    @property
    def rows(self):
        """The rows the chart shows now (``ProfileRow``), largest first."""
        return self.model.top(self.sort_by.value, self.row_limit.value)

    # -- drawing ----------------------------------------------------------------------
    def _draw(self):
        """The title, the bars and PyTorch's table for the current sort key and row limit."""
        rows = self.rows
        label, unit = SORT_KEYS[self.sort_by.value]
        self.title.value = (
            f"<b>ProfilerView</b> — {len(self.model)} event names; top {len(rows)} by "
            f"{html.escape(label)}")
        self.chart.value = bars_html(rows, label + UNITS[unit], unit, self.style)
        table = html.escape(self.model.table(self.sort_by.value, self.row_limit.value))
        # white-space: pre: a row of PyTorch's table stays on one line (scroll sideways)
        self.table.value = f'<pre style="{self.style}; font-size: 11px; white-space: pre">{table}</pre>'

    def fallback_png(self):
        """The stored picture: the chart drawn by matplotlib (a browser draws the HTML)."""
        label, unit = SORT_KEYS[self.sort_by.value]
        return self._chart(self.rows, label, unit), f"{WIDTH_PX}px"

    def _chart(self, rows, label, unit):
        """A fresh figure each time: its height and left margin follow the rows' number and
        names. The legend sits above the bars (it never covers a bar or its number)."""
        tick = font_size("tick")
        legend = LEGEND_INCHES * tick / 10
        height = 1.0 + legend + ROW_INCHES * tick / 10 * len(rows)
        width = WIDTH_PX / CSS_DPI
        self.canvas = canvas = Canvas(ncols=1, width=width, height=height)
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
        ax.set_xlabel(label + UNITS[unit], fontsize=font_size("label"))
        ax.spines[["top", "right"]].set_visible(False)
        kinds = [k for k in KINDS if any(r.kind == k for r in rows)]
        ax.legend(handles=[Patch(color=COLOURS[k], label=k) for k in kinds], fontsize=tick * 0.9,
                  loc="lower left", bbox_to_anchor=(0, 1), ncol=len(kinds), frameon=False,
                  borderaxespad=0.2, handlelength=1.2, columnspacing=1.2)
        return canvas.png()


def bars_html(rows, axis_label, unit, style):
    """The bar chart as an HTML table: per row the name, a coloured bar and its value.

    Bars are boxes placed in percent of the widest value's width; with negative
    values (memory freed) a zero line splits the width between the two sides.
    The legend (the kinds present) sits above the bars, the axis label below.
    """
    values = [row.value for row in rows]
    low, high = min(0.0, *values), max(0.0, *values)
    span = (high - low) or 1.0
    zero = -low / span  # where 0 is, as a fraction of the bar's width
    kinds = [k for k in KINDS if any(row.kind == k for row in rows)]
    swatch = "display:inline-block; width:0.9em; height:0.9em; vertical-align:-0.1em; margin-right:4px"
    legend = " &nbsp; ".join(f"<span style='{swatch}; background:{COLOURS[k]}'></span>{k}"
                             for k in kinds)
    cells = []
    for row, value in zip(rows, values):
        left = 100 * (zero + min(value, 0.0) / span)
        width = 100 * abs(value) / span
        bar = (f"<div style='position:relative; width:{BAR_PX}px; height:1.05em; "
               f"border-left:1px solid #888'><div style='position:absolute; top:0; bottom:0; "
               f"left:{left:.2f}%; width:{width:.2f}%; background:{COLOURS[row.kind]}'></div></div>")
        cells.append(f"<tr><td style='text-align:right; white-space:nowrap; padding-right:6px'>"
                     f"{html.escape(row.label)}</td><td>{bar}</td><td style='white-space:nowrap; "
                     f"padding-left:6px'>{format_value(value, unit)}</td></tr>")
    return (f"<div style='{style}'><div style='margin:4px 0'>{legend}</div>"
            f"<table style='border-collapse:collapse'>{''.join(cells)}"
            f"<tr><td></td><td style='text-align:center; padding-top:4px'>"
            f"{html.escape(axis_label)}</td><td></td></tr></table></div>")
