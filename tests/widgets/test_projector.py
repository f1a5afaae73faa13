"""Projector-ready views: 2x pixels, readable text, a text-size option, a picture in the
notebook file, and the small layout bugs a classroom noticed (issue 14 §3)."""
import base64
import io

import numpy as np
import pytest
from matplotlib.text import Text
from PIL import Image

import edutorch as et
import edutorch.nn as nn
import widgets
from widget_helpers import PNG_SIGNATURE, png_bytes
from widgets import (AutogradExplorer, BackwardStepper, GradientInspector, HookMonitor,
                     ParameterTree, PruneExplorer, TrainEvalExplorer, TrainingStepper, _render)


@pytest.fixture
def views(small_mlp, eval_batch):
    monitor = HookMonitor(small_mlp)
    monitor.run(eval_batch[0])
    return [PruneExplorer(small_mlp, data=eval_batch), monitor, ParameterTree(small_mlp),
            AutogradExplorer(et)]


def modal_mlp():
    """A small model with a BatchNorm1d and a Dropout (the modules TrainEvalExplorer shows)."""
    et.manual_seed(0)
    return nn.Sequential(nn.Linear(20, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Dropout(0.5),
                         nn.Linear(16, 4))


def newer_views(small_mlp, eval_batch):
    """The four views of the second round of widgets, each with its picture widgets."""
    x, y = eval_batch
    inspector = GradientInspector(small_mlp, eval_batch)
    explorer = TrainEvalExplorer(modal_mlp(), x[:8], batches=[x])
    explorer.next_button.click()
    stepper = TrainingStepper(small_mlp, (x, y), (x, y), batch_size=8)
    for _ in range(5):
        stepper.next_button.click()
    backward = BackwardStepper.for_model(small_mlp, x, y, nn.CrossEntropyLoss())
    backward.slider.value = 3
    return {inspector: [inspector.image, inspector.timeline],
            explorer: [explorer.image, explorer.detail_image],
            stepper: [stepper.image, stepper.curves_image],
            backward: [backward.image, backward.detail]}


@pytest.fixture
def newer(small_mlp, eval_batch):
    return newer_views(small_mlp, eval_batch)


def image_size(view, image=None):
    with Image.open(io.BytesIO(png_bytes(view.image if image is None else image))) as picture:
        return picture.size


def header_height(view, width):
    """The height of the title and caption text drawn above a stored picture."""
    lines = [line for markup in view.fallback_text() for line in _render.plain_lines(markup)]
    if not lines:
        return 0
    with Image.open(io.BytesIO(_render.text_png(lines, width))) as header:
        return header.height


def test_figures_have_two_pixels_per_css_pixel(views):
    for view in views:
        width_px, _ = image_size(view)
        css = float(view.image.layout.width.removesuffix("px"))
        assert width_px == pytest.approx(_render.PIXEL_RATIO * css, abs=2), type(view).__name__
        assert css >= 400


def test_newer_views_have_two_pixels_per_css_pixel_and_fit_the_notebook(newer):
    for view, images in newer.items():
        widths = []
        for image in images:
            width_px, _ = image_size(view, image)
            css = float(image.layout.width.removesuffix("px"))
            assert width_px == pytest.approx(_render.PIXEL_RATIO * css, abs=2), type(view).__name__
            widths.append(css)
        side_by_side = isinstance(view, BackwardStepper)  # its graph beside the gradients
        assert (sum(widths) if side_by_side else max(widths)) <= 770, type(view).__name__


def tick_and_text_sizes(view):
    """Every tick label's and every other text's size in points, over all the view's figures."""
    figures = [c.figure for c in vars(view).values() if isinstance(c, _render.Canvas)]
    figures += [getattr(view, name).canvas.figure for name in ("curves",) if hasattr(view, name)]
    figures += [d.canvas.figure for d in getattr(view, "details", {}).values()]
    shown = [ax for f in figures for ax in f.axes if ax.axison]  # axes drawn with their ticks
    ticks = {t.get_fontsize() for ax in shown
             for t in ax.get_xticklabels() + ax.get_yticklabels() if t.get_text()}
    texts = [t for ax in shown for t in ax.findobj(Text)]
    texts += [t for f in figures for ax in f.axes if not ax.axison for t in ax.texts + [ax.title]]
    texts += [t for f in figures for legend in f.legends for t in legend.findobj(Text)]
    return ticks, {t.get_fontsize() for t in texts if t.get_text()}


def test_newer_views_use_readable_text_that_follows_the_text_scale(small_mlp, eval_batch):
    normal = newer_views(small_mlp, eval_batch)
    widgets.set_text_scale(1.5)
    try:
        big = newer_views(small_mlp, eval_batch)
    finally:
        widgets.set_text_scale()
    for small_view, big_view in zip(normal, big):
        name = type(small_view).__name__
        ticks, texts = tick_and_text_sizes(small_view)
        assert min(texts) >= 9 and (not ticks or min(ticks) >= 10), name
        big_ticks, big_texts = tick_and_text_sizes(big_view)
        assert min(big_texts) == pytest.approx(1.5 * min(texts)), name
        assert "font-size: 13px" in small_view.style and "font-size: 20px" in big_view.style
        caption = next(getattr(big_view, n) for n in ("caption", "change", "code")
                       if hasattr(big_view, n))
        assert "font-size: 20px" in caption.value, name
    backward = [v for v in big if isinstance(v, BackwardStepper)][0]
    assert backward.picture.font.size == round(_render.PIXEL_RATIO * 1.5 * 13)


def test_text_is_at_least_ten_points_and_scales(small_mlp, eval_batch):
    def tick_sizes(view):
        return {t.get_fontsize() for ax in view.canvas.figure.axes
                for t in ax.get_xticklabels() + ax.get_yticklabels()}

    normal = PruneExplorer(small_mlp, data=eval_batch)
    assert min(tick_sizes(normal)) >= 10
    assert "font-size: 13px" in normal.table.value
    widgets.set_text_scale(1.5)
    try:
        big = PruneExplorer(small_mlp, data=eval_batch)
        assert min(tick_sizes(big)) == pytest.approx(1.5 * min(tick_sizes(normal)))
        assert "font-size: 20px" in big.table.value
        assert widgets.text_scale() == 1.5
    finally:
        widgets.set_text_scale()
    assert widgets.text_scale() == 1.0
    with pytest.raises(ValueError, match="between 0.5 and 4"):
        widgets.set_text_scale(10)


def test_every_view_stores_its_picture_in_the_notebook_output(views):
    for view in views:
        data, metadata = view._repr_mimebundle_()
        assert "application/vnd.jupyter.widget-view+json" in data and data["text/plain"]
        png = base64.b64decode(data["image/png"])
        assert png.startswith(PNG_SIGNATURE)
        with Image.open(io.BytesIO(png)) as image:
            width, height = image_size(view)  # the picture the view shows, compressed,
            assert image.size == (width, height + header_height(view, width))  # under its text
        assert metadata["image/png"]["width"] == int(view.image.layout.width.removesuffix("px"))


def test_newer_views_store_all_their_pictures_in_the_notebook_output(newer):
    for view, images in newer.items():
        data, metadata = view._repr_mimebundle_()
        assert "application/vnd.jupyter.widget-view+json" in data and data["text/plain"]
        png = base64.b64decode(data["image/png"])
        sizes = [image_size(view, image) for image in images]
        with Image.open(io.BytesIO(png)) as picture:
            if isinstance(view, BackwardStepper):  # graph and gradients side by side
                expected = (sum(w for w, _ in sizes), max(h for _, h in sizes))
            else:  # one picture above the other
                expected = (max(w for w, _ in sizes), sum(h for _, h in sizes))
            expected = (expected[0], expected[1] + header_height(view, expected[0]))  # + text
            assert picture.size == expected, type(view).__name__
        assert metadata["image/png"]["width"] == round(expected[0] / _render.PIXEL_RATIO)


def test_joined_png_lays_pictures_out_in_rows():
    def blank(width, height, colour):
        buffer = io.BytesIO()
        Image.new("RGB", (width, height), colour).save(buffer, format="png")
        return buffer.getvalue()

    png, width = _render.joined_png([[blank(10, 4, "red"), blank(6, 8, "blue")],
                                     [blank(12, 2, "green")]])
    with Image.open(io.BytesIO(png)) as picture:
        assert picture.size == (16, 10) and width == "8px"
        assert picture.getpixel((0, 0)) == (255, 0, 0) and picture.getpixel((12, 0)) == (0, 0, 255)
        assert picture.getpixel((0, 9)) == (0, 128, 0) and picture.getpixel((15, 9)) == (255,) * 3
    assert _render.joined_png([[b""]]) == (b"", None)


def test_max_abs_without_copies_and_with_non_finite_values():
    assert _render.max_abs(np.array([[-3.0, 2.0]], dtype=np.float32)) == 3.0
    assert _render.max_abs(np.array([1.0, np.inf, -2.0, np.nan])) == 2.0
    assert _render.max_abs(np.array([np.nan])) == 0.0
    assert _render.max_abs(np.zeros((0, 3))) == 0.0


def test_a_huge_mask_is_drawn_from_a_subsample():
    canvas = _render.Canvas()
    panel = _render.TensorPanel(canvas, 0)
    mask = np.zeros((4096, 4096), dtype=bool)
    mask[:, ::2] = True
    assert panel.show(mask, mask=True) == 1.0
    shown = panel.artists["mask"].get_array()
    assert shown.shape[0] <= _render.MAX_PIXELS and shown.shape[1] <= _render.MAX_PIXELS
    assert canvas.png().startswith(PNG_SIGNATURE)


# -- HookMonitor --------------------------------------------------------------------------
def test_hook_monitor_label_counts_like_its_slider(small_mlp, eval_batch):
    monitor = HookMonitor(small_mlp)
    monitor.run(eval_batch[0])
    monitor.slider.value = 6
    assert monitor.current().index == 6
    assert monitor.position.value == f"event #6 (of #0–#{len(monitor.events) - 1})"
    assert monitor.caption.value.count("#6 ") == 1  # the heading uses the same number


def test_hook_monitor_description_wraps_between_words_only(small_mlp, eval_batch):
    monitor = HookMonitor(small_mlp)
    monitor.run(eval_batch[0])
    description = monitor.description.value
    assert description.startswith("<pre style=")
    style = description.split("'")[1]
    assert "white-space: pre-wrap" in style and "word-break: normal" in style
    assert "break-all" not in style and "anywhere" not in style


# -- PruneExplorer ------------------------------------------------------------------------
def test_prune_explorer_n_and_dim_dropdowns_have_room_for_their_value(small_mlp):
    view = PruneExplorer(small_mlp)
    for dropdown in (view.n, view.dim):
        assert dropdown.disabled  # L1 unstructured: neither applies
        assert dropdown.style.description_width == "initial"  # no 90 px reserved for "n"
        assert int(dropdown.layout.width.removesuffix("px")) >= 100


def test_make_permanent_with_nothing_pruned_adds_no_undo_step(small_mlp):
    view = PruneExplorer(small_mlp)
    view.permanent_button.click()
    assert view.model.undo_stack == [] and view.action_error is None
    assert "undo steps: 0" in view.title.value
    view.apply_button.click()
    view.permanent_button.click()
    assert len(view.model.undo_stack) == 2
    view.permanent_button.click()  # nothing pruned any more
    assert len(view.model.undo_stack) == 2


def test_a_detached_monitor_cannot_be_cleared_into_a_dead_widget_and_can_attach_again(small_mlp,
                                                                                       eval_batch):
    monitor = HookMonitor(small_mlp)
    monitor.run(eval_batch[0])
    recorded = len(monitor.events)
    monitor.detach()
    assert monitor.clear_button.disabled and "attach()" in monitor.clear_button.tooltip
    assert len(monitor.events) == recorded  # what was recorded stays visible
    monitor.attach()
    assert not monitor.clear_button.disabled
    monitor.clear_button.click()
    monitor.run(eval_batch[0])
    assert len(monitor.events) == recorded


@pytest.mark.parametrize("compressor", ["default", "zlib"])
def test_the_hand_written_png_holds_exactly_the_canvas_pixels(monkeypatch, compressor):
    """``png_bytes`` writes the PNG itself (signature, IHDR, IDAT, IEND), deflated by ISA-L
    when ``isal`` is installed, else by zlib: any decoder reads back the canvas's RGBA
    pixels, width and height exactly."""
    import zlib

    from widgets import _render
    from widgets._render import Canvas

    if compressor == "zlib":
        monkeypatch.setattr(_render, "deflate", zlib.compress)
    canvas = Canvas(ncols=1, width=2.1, height=1.3)
    ax = canvas.figure.add_subplot()
    ax.imshow(np.random.default_rng(0).standard_normal((7, 9)), cmap="RdBu_r")
    ax.set_title("ÿ pixels")
    canvas.figure.canvas.draw()
    png = _render.png_bytes(canvas.figure.canvas)
    with Image.open(io.BytesIO(png)) as image:
        image.load()  # checks every chunk's CRC and the deflated rows
        decoded = np.asarray(image)
        assert image.mode == "RGBA" and image.size == canvas.figure.canvas.get_width_height()
    expected = np.asarray(canvas.figure.canvas.buffer_rgba())
    assert np.array_equal(decoded, expected) and len(np.unique(decoded.reshape(-1, 4), axis=0)) > 50