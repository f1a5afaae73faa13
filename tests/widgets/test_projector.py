"""Projector-ready views: 2x pixels, readable text, a text-size option, a picture in the
notebook file, and the small layout bugs a classroom noticed (issue 14 §3)."""
import base64
import io

import numpy as np
import pytest
from PIL import Image

import edutorch as et
import widgets
from widget_helpers import PNG_SIGNATURE, png_bytes
from widgets import AutogradExplorer, HookMonitor, ParameterTree, PruneExplorer, _render


@pytest.fixture
def views(small_mlp, eval_batch):
    monitor = HookMonitor(small_mlp)
    monitor.run(eval_batch[0])
    return [PruneExplorer(small_mlp, data=eval_batch), monitor, ParameterTree(small_mlp),
            AutogradExplorer(et)]


def image_size(view):
    with Image.open(io.BytesIO(png_bytes(view.image))) as image:
        return image.size


def test_figures_have_two_pixels_per_css_pixel(views):
    for view in views:
        width_px, _ = image_size(view)
        css = float(view.image.layout.width.removesuffix("px"))
        assert width_px == pytest.approx(_render.PIXEL_RATIO * css, abs=2), type(view).__name__
        assert css >= 400


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
            assert image.size == image_size(view)  # the picture the view shows, compressed
        assert metadata["image/png"]["width"] == int(view.image.layout.width.removesuffix("px"))


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
