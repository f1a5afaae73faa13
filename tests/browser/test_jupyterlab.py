"""Open a lesson in JupyterLab in headless Chromium, Run All, and check the widgets render.

What a student sees after ``./dev lab``: the notebook runs top to bottom in a
live kernel, every exercise check prints ``✓ correct``, no cell fails, and the
lesson's widget is drawn (its controls and its PNG figure) and reacts to its
slider. Saved and reopened without its kernel, the lesson shows every widget's
picture again (never "Error displaying widget: model not found"). A screenshot goes to pytest's temporary folder; with
``EDUTORCH_UPDATE_SCREENSHOTS=1`` it also replaces the committed one in
``docs/img/`` (the picture in the README).

Skips with a reason when Chromium (``/usr/bin/chromium``) or playwright is
missing (markers and skips: tests/conftest.py and tests/browser/conftest.py).
"""
from __future__ import annotations

import json
import os
import pathlib
import re
import time

import pytest

pytestmark = pytest.mark.browser

DOCS_IMG = pathlib.Path(__file__).resolve().parents[2] / "docs" / "img"
PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"
RUN_TIMEOUT_S = 120

NEXT_STAGE = ".widget-button:has-text('next stage')"  # TrainingStepper's main control
# lesson -> (CSS selector of the widget's main control, screenshot file name)
WIDGETS = {
    "01-tensors-and-autograd": (".widget-slider", "autograd-explorer.png"),
    "02-modules-parameters-buffers": (".widget-dropdown", "parameter-tree.png"),
    "03-hooks": (".widget-slider", "hook-monitor.png"),
    "04-pruning": (".widget-slider", "prune-explorer.png"),
    "05-training-loop-and-optimizers": (NEXT_STAGE, "lesson-05-training-stepper.png"),
    "06-train-and-eval": (".widget-slider", "lesson-06-train-eval.png"),
    "07-gradients-up-close": (".widget-slider", "gradients-up-close.png"),
    "08-initialization-dtype-device": (".widget-toggle-buttons", "lesson-08-weight-distributions.png"),
    "09-extending-autograd": (".widget-slider", "lesson-09-backward-stepper.png"),
    "10-reparametrizations": (".widget-dropdown", "lesson-10-parameter-tree.png"),
    "11-freezing-and-fine-tuning": (NEXT_STAGE, "lesson-11-training-stepper.png"),
    "12-beyond-the-basics": (".widget-slider", "lesson-12-backward-stepper.png"),
    "13-forward-mode-and-function-transforms": (".widget-slider", "lesson-13-tangent-stepper.png"),
    "examples/gradient_inspector": (".widget-slider", "gradient-inspector.png"),
    "examples/train_eval_explorer": (".widget-slider", "train-eval-explorer.png"),
    "examples/training_stepper": (NEXT_STAGE, "training-stepper.png"),
    "examples/backward_stepper": (".widget-slider", "backward-stepper.png"),
}
# A lesson and one of the newer widgets by default (a whole open-run-screenshot cycle
# takes most of a minute on a busy 2-core machine); EDUTORCH_BROWSER_LESSONS=NAME,NAME
# (any keys of WIDGETS) runs others, e.g. all of them to refresh every screenshot.
LESSONS = os.environ.get("EDUTORCH_BROWSER_LESSONS", "04-pruning,examples/training_stepper").split(",")


def open_notebook(page, base_url, name):
    page.goto(f"{base_url}lab/tree/{name}.ipynb?reset", wait_until="domcontentloaded")
    page.wait_for_selector(f"{PANEL} .jp-Notebook", timeout=60_000)
    wait_for_idle_kernel(page)


def wait_for_idle_kernel(page, timeout_ms=60_000):
    """The status bar says ``Python 3 (ipykernel) | Idle``: the kernel is connected and idle.

    (The notebook's execution indicator reads "idle" before the kernel has even
    connected, and a Run All sent then is dropped.)
    """
    page.wait_for_function(
        "() => [...document.querySelectorAll('.jp-StatusBar-TextItem')]"
        ".some(e => e.textContent.includes('| Idle'))", timeout=timeout_ms)


def run_all_cells(page):
    """Run ▸ Run All Cells, through the menu as a student would."""
    page.click('.lm-MenuBar-itemLabel:text-is("Run")')
    page.click('.lm-Menu-itemLabel:text-is("Run All Cells")')


def prompts(page):
    return page.eval_on_selector_all(
        f"{PANEL} .jp-CodeCell .jp-InputArea-prompt", "els => els.map(e => e.textContent.trim())")


def wait_until_all_ran(page):
    """Every code cell shows ``[n]:`` with n = 1..N and the kernel is idle again."""
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while time.monotonic() < deadline:
        shown = prompts(page)
        numbers = [re.fullmatch(r"\[(\d+)\]:", p) for p in shown]
        if shown and all(numbers) and sorted(int(m.group(1)) for m in numbers) == list(
                range(1, len(shown) + 1)):
            wait_for_idle_kernel(page, timeout_ms=30_000)
            return shown
        page.wait_for_timeout(250)
    raise AssertionError(f"the notebook did not finish in {RUN_TIMEOUT_S} s: prompts {prompts(page)}")


def image_sources(page):
    """The ``src`` of every widget image (a widget may draw its slider's effect in any)."""
    return page.eval_on_selector_all(f"{PANEL} img.widget-image", "imgs => imgs.map(i => i.src)")


def save_screenshot(page, tmp_path, filename, update_docs=True):
    """Scroll the widget's cell to the top and photograph the JupyterLab window (and, with
    ``EDUTORCH_UPDATE_SCREENSHOTS=1`` and ``update_docs``, refresh the README's copy)."""
    if page.locator("#jp-left-stack").is_visible():
        page.keyboard.press("Control+b")  # hide the file browser: more room for the widget
        page.wait_for_timeout(500)  # the notebook re-flows to the new width
    page.eval_on_selector(  # the cell's code too when it fits, else the widget alone
        f"{PANEL} .jp-OutputArea-output:has(.jupyter-widgets)",
        "el => { const cell = el.closest('.jp-Cell');"
        " const tall = cell.getBoundingClientRect().height > 0.8 * window.innerHeight;"
        " (tall ? el : cell).scrollIntoView({block: 'start'}); }")
    page.mouse.move(0, 0)  # no hover highlight
    page.wait_for_timeout(500)
    page.screenshot(path=str(tmp_path / filename))
    if update_docs and os.environ.get("EDUTORCH_UPDATE_SCREENSHOTS") == "1":
        DOCS_IMG.mkdir(parents=True, exist_ok=True)
        save_compact_png(tmp_path / filename, DOCS_IMG / filename)
    return tmp_path / filename


def save_compact_png(source, target):
    """A 256-colour copy for the repository: a third of the size, no visible difference
    for a screenshot of an interface."""
    from PIL import Image

    with Image.open(source) as image:
        palette = image.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT,
                                                dither=Image.Dither.NONE)
        palette.save(target, optimize=True)


def run_then_stop(page):
    """TrainingStepper: "run N steps" with a large N, then "stop": the kernel handles the
    click between two chunks, so the run ends early and the controls come back."""
    page.locator(f"{PANEL} .widget-text input").first.fill("5000")
    page.locator(f"{PANEL} .widget-text input").first.press("Enter")
    page.locator(f"{PANEL} .widget-button:has-text('run N steps')").first.click()
    stop_is_disabled = ("([panel, want]) => [...document.querySelectorAll(panel + ' .widget-button')]"
                        ".some(b => b.textContent.includes('stop') && b.disabled === want)")
    page.wait_for_function(stop_is_disabled, arg=[PANEL, False], timeout=30_000)
    page.wait_for_timeout(500)
    page.locator(f"{PANEL} .widget-button:has-text('stop')").first.click()
    page.wait_for_function(stop_is_disabled, arg=[PANEL, True], timeout=30_000)
    status = page.locator(f"{PANEL} .widget-label", has_text="/ 5000 steps").first.inner_text()
    done = int(status.split("/")[0])
    assert 0 < done < 5000, status


@pytest.mark.parametrize("lesson", LESSONS)
def test_lesson_runs_and_its_widget_renders(jupyterlab, browser, tmp_path, lesson):
    base_url, root = jupyterlab
    control, screenshot = WIDGETS[lesson]
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        open_notebook(page, base_url, lesson)
        run_all_cells(page)
        wait_until_all_ran(page)

        errors = page.locator(f'{PANEL} .jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')
        assert errors.count() == 0, errors.first.inner_text()[:2000]
        exercises = page.locator(f"{PANEL} .jp-OutputArea-output", has_text="✓ correct")
        notebook = json.loads((root / f"{lesson}.ipynb").read_text(encoding="utf-8"))
        expected = sum(1 for cell in notebook["cells"] if cell["cell_type"] == "code"
                       and re.search(r"checks\.exercise_\d+_\d+\(", "".join(cell["source"])))
        assert exercises.count() == expected

        # the widget: its container, its main control and its figure, decoded by the browser
        assert page.locator(f"{PANEL} .jupyter-widgets").count() > 0
        assert page.locator(f"{PANEL} {control}").count() > 0
        wait_for_every_widget_picture(page)

        path = save_screenshot(page, tmp_path, screenshot)
        assert path.stat().st_size > 10_000

        # the kernel answers a key press on the main control: the figure changes
        before = image_sources(page)
        if control == ".widget-slider":  # move the slider with the arrow key
            page.locator(f"{PANEL} .widget-slider .noUi-handle").first.press("ArrowRight")
        elif control == NEXT_STAGE:  # focus the button and press Enter
            page.locator(f"{PANEL} {control}").first.press("Enter")
        if control in (".widget-slider", NEXT_STAGE):
            page.wait_for_function(
                "([sel, old]) => [...document.querySelectorAll(sel)].some((img, i) => img.src !== old[i])",
                arg=[f"{PANEL} img.widget-image", before], timeout=30_000)
        if control == NEXT_STAGE:
            run_then_stop(page)

        if lesson.startswith("examples/"):
            return  # a learner saves and reopens lessons (and each reopen costs ~10 s)
        save_and_reopen_without_kernel(page, base_url, root / f"{lesson}.ipynb")
        assert page.locator(f"{PANEL} .jupyter-widgets", has_text="model not found").count() == 0
        wait_for_every_widget_picture(page)
        save_screenshot(page, tmp_path, "reopened-" + screenshot, update_docs=False)
    finally:
        page.close()


WIDGET_OUTPUT = f"{PANEL} .jp-OutputArea-output:has(> .jupyter-widgets)"  # a widget view, top level


def saved_widget_models(path):
    """``(shown, stored)``: the widget model ids the saved notebook's outputs show, and those
    whose state its metadata stores."""
    notebook = json.loads(path.read_text(encoding="utf-8"))
    shown = {output["data"]["application/vnd.jupyter.widget-view+json"]["model_id"]
             for cell in notebook["cells"] for output in cell.get("outputs", ())
             if "application/vnd.jupyter.widget-view+json" in output.get("data", {})}
    state = notebook["metadata"].get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {})
    return shown, set(state.get("state", {}))


def save_and_reopen_without_kernel(page, base_url, path):
    """Save (Ctrl+S), shut the kernel down as closing the lab does, and reload the page: the
    notebook comes back from disk with a new kernel that holds none of its widgets' models,
    so each widget can only be drawn from the state saved in the notebook (the learner's
    setting ``saveState`` in teaching/jupyter/learner/lab-settings/overrides.json)."""
    page.locator(f"{PANEL} .jp-Notebook").first.click(position={"x": 5, "y": 5})
    page.keyboard.press("Control+s")
    deadline = time.monotonic() + 30
    while True:
        shown, stored = saved_widget_models(path)
        if shown and shown <= stored:
            break
        assert time.monotonic() < deadline, f"not saved with its widget state: {shown - stored}"
        page.wait_for_timeout(250)
    shut_down_kernels(page, base_url)
    page.reload(wait_until="domcontentloaded")
    page.wait_for_selector(f"{PANEL} .jp-Notebook", timeout=60_000)
    wait_for_idle_kernel(page)


def shut_down_kernels(page, base_url):
    """End every kernel session of the server (its REST API, as the lab's "Shut Down All")."""
    xsrf = {c["name"]: c["value"] for c in page.context.cookies()}.get("_xsrf", "")
    for session in page.request.get(f"{base_url}api/sessions").json():
        response = page.request.delete(f"{base_url}api/sessions/{session['id']}",
                                       headers={"X-XSRFToken": xsrf})
        assert response.ok, response.status


def wait_for_every_widget_picture(page, timeout_ms=60_000):
    """Every widget output of the notebook shows a decoded picture (its ``widget-image``), or
    its bars drawn as HTML (ProfilerView's ``edutorch-bars``). On a timeout the error says
    what each output's pictures were (a busy 2-core CI machine decodes late, not never)."""
    try:
        page.wait_for_function(
            "sel => { const outputs = [...document.querySelectorAll(sel)];"
            " return outputs.length > 0 && outputs.every(out => [...out.querySelectorAll('img')]"
            ".some(img => img.complete && img.naturalWidth > 100)"
            " || out.querySelector('.edutorch-bars table') !== null); }",
            arg=WIDGET_OUTPUT, timeout=timeout_ms)
    except Exception as error:
        seen = page.eval_on_selector_all(
            WIDGET_OUTPUT, "outs => outs.map(out => [...out.querySelectorAll('img')]"
            ".map(img => [img.className, img.complete, img.naturalWidth, img.src.slice(0, 40)]))")
        raise AssertionError(f"widget pictures not all drawn: {seen}") from error


def test_a_widget_shows_its_picture_before_its_cell_runs(jupyterlab, browser):
    """A student opens lesson 01 and runs nothing: the notebook is not trusted, so
    JupyterLab draws no widget; it shows the PNG stored next to the widget view (at the
    widget's CSS width, twice as many pixels), not the widget's text form."""
    base_url, _ = jupyterlab
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        open_notebook(page, base_url, "01-tensors-and-autograd")
        picture = f'{PANEL} .jp-OutputArea-output[data-mime-type="image/png"] img'
        page.wait_for_function(
            "sel => { const img = document.querySelector(sel);"
            " return img && img.complete && img.naturalWidth > 1000; }",
            arg=picture, timeout=30_000)
        shown = page.eval_on_selector(picture, "img => [img.naturalWidth, img.width]")
        assert shown[1] == pytest.approx(shown[0] / 2, abs=2), shown  # 2 pixels per CSS pixel
        texts = page.locator(f"{PANEL} .jp-OutputArea-output", has_text="AutogradExplorer(f=")
        assert texts.count() == 0, "the widget's text form is shown instead of its picture"
    finally:
        page.close()
