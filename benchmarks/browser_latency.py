"""What a person waits for: every widget control in JupyterLab in Chromium, input → new picture.

Not a test and not part of ``./dev test``: it starts JupyterLab on a copy of the
lessons (the browser test's server, ``tests/browser/conftest.py``), opens each
lesson in headless Chromium, runs it (Run All) and then, for every control of
every widget the lesson shows, makes a real input (an arrow key on a slider,
another option in a dropdown, a click on a button or a toggle) and measures, in
the page, from the input event to the widget's new picture *decoded*:

- ``t0``: ``performance.now()`` in a capturing ``keydown``/``mousedown``/``change``
  listener, i.e. when the browser hands the input to the page;
- the widget's ``<img>`` elements are watched (``MutationObserver`` on ``src``);
  each new picture is timed when ``img.decode()`` resolves; the update is over when
  a picture came and nothing in the widget changed for 500 ms after it (a control
  that changes only text is given 4 s first, so a slow kernel's picture is never
  missed); the latency is the LAST picture's time
  (a control that redraws two pictures is done when both are); a control that only
  changes text is timed to its last DOM change (marked ``text``).

The lessons are every lesson whose code builds one of ``WIDGETS`` (a new lesson with a
widget is measured without a change here). A widget's sliders, dropdowns and toggles go
first, then its buttons; a stepper's "◀ prev" and "next ▶" (disabled with nowhere to go)
in the order that gives both their inputs: the one with more room first.

Multi-step buttons (GradientInspector "10 steps", TrainingStepper "run N steps")
are timed to their first visible change (the progress a person sees: a status
line, a progress bar), and report their first new picture and the longest wait
for a picture (from the click, then between two pictures) while they run.

Usage (a few minutes per lesson on 2 cores)::

    python benchmarks/browser_latency.py                   # every lesson with a widget
    python benchmarks/browser_latency.py --only 07,12      # lessons whose name contains these
    python benchmarks/browser_latency.py --repeat 7 --json out.json
    python benchmarks/browser_latency.py --only 05 --windowing none  # every cell laid out

The lab runs with JupyterLab's own default notebook ``windowingMode``,
``contentVisibility`` (off-screen cells are not laid out or painted): what a
learner's ``./dev lab`` shows, a person's view. ``--windowing none`` lays out every
cell, as the browser test does (and as the tables measured before 2026-11-29
12:30 did). A click or a dropdown is timed from its ``mousedown``, so it includes
what JupyterLab's notebook does with it before the widget sees it (it focuses the
cell: a style recalculation of the notebook, larger with ``--windowing none``;
benchmarks/README.md, "The floor under a picture").

The table (median ms per control) is in benchmarks/README.md, "What a person sees".
"""
from __future__ import annotations

import argparse
import json
import pathlib
import shutil
import signal
import statistics
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.browser import conftest as lab  # noqa: E402  (the browser test's server)
from tests.browser.test_jupyterlab import (  # noqa: E402
    PANEL, open_notebook, run_all_cells, shut_down_kernels, wait_until_all_ran)

MULTI_STEP = ("10 steps", "run N steps")  # buttons that draw progress while they run
SKIPPED = ("stop", "clear", "make permanent")  # nothing to redraw, or the end of the widget
QUIET_MS, TEXT_WAIT_MS, CAP_MS = 500, 4000, 10000  # see COLLECT
MULTI_QUIET_MS, MULTI_CAP_MS = 1500, 60000

#: watch one widget output: t0 at the input event, each picture decoded, each DOM change
ARM = """out => {
  const s = {t0: null, loads: [], changes: []};
  window.__latency = s;
  const start = () => { if (s.t0 === null) s.t0 = performance.now(); };
  for (const type of ['keydown', 'mousedown', 'input', 'change'])
    window.addEventListener(type, start, {capture: true, once: true});
  s.observer = new MutationObserver(records => {
    s.changes.push(performance.now());
    for (const r of records)
      if (r.type === 'attributes' && r.target.tagName === 'IMG')
        r.target.decode().then(() => s.loads.push(performance.now()), () => {});
  });
  s.observer.observe(out, {subtree: true, childList: true, characterData: true,
                           attributes: true, attributeFilter: ['src', 'disabled', 'style']});
}"""
#: wait until a picture came and the widget has been quiet for ``quiet`` ms since; a control
#: that changes no picture (text only) is given ``text_wait`` ms first; ``cap`` ms at most
COLLECT = """([quiet, textWait, cap]) => new Promise(resolve => {
  const s = window.__latency, began = performance.now();
  const tick = () => {
    const now = performance.now();
    const last = Math.max(s.t0 ?? began, ...s.changes, ...s.loads);
    const heard = s.loads.length > 0 || (s.changes.length > 0 && now - began > textWait);
    if ((s.t0 !== null && heard && now - last > quiet) || now - began > cap) {
      s.observer.disconnect();
      resolve({t0: s.t0, loads: s.loads.slice().sort((a, b) => a - b), changes: s.changes});
    } else setTimeout(tick, 25);
  };
  tick();
})"""
#: the controls of widget output ``i``: [kind, label, index among its kind]
CONTROLS = """out => {
  const label = el => (el.closest('.widget-inline-hbox, .widget-toggle-buttons')
                       ?.querySelector('.widget-label')?.textContent || '').trim();
  const found = [];
  out.querySelectorAll('.widget-slider .noUi-handle').forEach((h, i) =>
    found.push(['slider', label(h), i]));
  out.querySelectorAll('.widget-dropdown select').forEach((d, i) =>
    found.push(['dropdown', label(d), i]));
  out.querySelectorAll('.widget-toggle-buttons').forEach((t, i) =>
    found.push(['toggle', label(t), i]));
  out.querySelectorAll('.widget-checkbox input').forEach((c, i) =>
    found.push(['checkbox', label(c), i]));
  out.querySelectorAll('button.widget-button').forEach((b, i) =>
    found.push(['button', b.textContent.trim(), i]));
  return found;
}"""


def widget_outputs(page):
    return page.locator(f"{PANEL} .jp-OutputArea-output:has(> .jupyter-widgets)")


WIDGETS = ("AutogradExplorer", "ParameterTree", "HookMonitor", "PruneExplorer", "TrainingStepper",
           "TrainEvalExplorer", "GradientInspector", "BackwardStepper", "TangentStepper",
           "ProfilerView")


def lessons_with_widgets(folder):
    """The lessons (names without ``.ipynb``) whose code builds one of ``WIDGETS``: every
    lesson a learner sees a widget in, a new lesson included."""
    found = []
    for path in sorted(pathlib.Path(folder).glob("[0-9][0-9]-*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
        if any(name + "(" in code for name in WIDGETS):
            found.append(path.stem)
    return found


def widget_name(output):
    """The widget class the output's cell builds (the first one its code names)."""
    code = output.locator("xpath=ancestor::div[contains(@class, 'jp-CodeCell')]").first.locator(
        ".jp-InputArea").text_content()
    named = sorted((code.find(name + "("), name) for name in WIDGETS if name + "(" in code)
    return named[0][1] if named else "?"


def act(output, kind, index, rep):
    """One input on a control; False when the control cannot take it now (disabled)."""
    selector = {"slider": ".widget-slider .noUi-handle", "dropdown": ".widget-dropdown select",
                "toggle": ".widget-toggle-buttons", "checkbox": ".widget-checkbox input",
                "button": "button.widget-button"}[kind]
    if not output.locator(selector).nth(index).is_visible():
        return False  # hidden in the widget's current state
    if kind == "slider":
        handle = output.locator(".widget-slider .noUi-handle").nth(index)
        now, high = (float(handle.get_attribute(a) or 0) for a in ("aria-valuenow", "aria-valuemax"))
        low = float(handle.get_attribute("aria-valuemin") or 0)
        if high <= low:
            return False
        forward = now < high and (rep % 2 == 0 or now <= low)
        handle.press("ArrowRight" if forward else "ArrowLeft")
    elif kind == "dropdown":
        select = output.locator(".widget-dropdown select").nth(index)
        options = select.locator("option").all()
        if select.is_disabled() or len(options) < 2:
            return False
        current = select.evaluate("s => s.selectedIndex")
        select.select_option(index=(current + 1) % len(options))
    elif kind == "toggle":
        buttons = output.locator(".widget-toggle-buttons").nth(index).locator(
            "button:not(.mod-active)")
        if buttons.count() == 0:
            return False
        buttons.nth(rep % buttons.count()).click()
    elif kind == "checkbox":
        box = output.locator(".widget-checkbox input").nth(index)
        if box.is_disabled():
            return False
        box.click()
    else:
        button = output.locator("button.widget-button").nth(index)
        if button.is_disabled():
            return False
        button.click()
    return True


def measure(page, output, kind, index, rep, multi):
    """One input and what followed: ``None`` when the control was disabled or nothing changed."""
    output.evaluate(ARM)
    if not act(output, kind, index, rep):
        page.evaluate("() => window.__latency.observer.disconnect()")
        return None
    quiet, cap = (MULTI_QUIET_MS, MULTI_CAP_MS) if multi else (QUIET_MS, CAP_MS)
    seen = page.evaluate(COLLECT, [quiet, TEXT_WAIT_MS, cap])
    if seen["t0"] is None:
        return None
    loads = [t - seen["t0"] for t in seen["loads"] if t >= seen["t0"]]
    changes = [t - seen["t0"] for t in seen["changes"] if t >= seen["t0"]]
    if not (loads or changes):
        return None
    times = loads or changes
    result = {"picture": bool(loads), "last": times[-1], "first_change": min(changes or times)}
    if multi and loads:  # the first picture, and the longest wait for the next one
        result["first"] = loads[0]
        result["gap"] = max(b - a for a, b in zip([0.0] + loads, loads))
    return result


def bench_lesson(browser, base_url, lesson, repeat):
    """Rows ``(lesson, widget, kind, control, median ms, note)`` for every control of the
    lesson's widgets."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    rows = []
    try:
        open_notebook(page, base_url, lesson)
        run_all_cells(page)
        wait_until_all_ran(page)
        for number in range(widget_outputs(page).count()):
            output = widget_outputs(page).nth(number)
            output.scroll_into_view_if_needed()
            name = widget_name(output)
            controls = output.evaluate(CONTROLS)
            controls.sort(key=lambda c: (c[0] == "button", any(m in c[1] for m in MULTI_STEP)))
            others = [c for c in controls if c[0] != "button"]
            for kind, label, index in others:
                rows.append(measure_control(page, output, lesson, name, kind, label, index, repeat))
            buttons = stepping_order(output, [c for c in controls if c[0] == "button"])
            for kind, label, index in buttons:  # after the sliders: they move a stepper
                if not any(word in label for word in SKIPPED):
                    rows.append(measure_control(page, output, lesson, name, kind, label, index,
                                                repeat))
        shut_down_kernels(page, base_url)  # the next lesson gets the CPU to itself
    finally:
        page.close()
    return rows


def measure_control(page, output, lesson, name, kind, label, index, repeat):
    """The row of one control: ``repeat`` inputs (2 for a multi-step button), printed."""
    multi = any(m in label for m in MULTI_STEP)
    runs = [measure(page, output, kind, index, rep, multi)
            for rep in range(2 if multi else repeat)]
    taken = [r for r in runs if r]  # None: disabled, or nothing changed
    result = row(lesson, name, kind, label, taken, multi)
    if 0 < len(taken) < len(runs):  # a median of fewer inputs: say so
        result = result[:-1] + ("; ".join(filter(None, [
            result[-1], f"{len(taken)} of {len(runs)} inputs took effect"])),)
    print(" | ".join(str(x) for x in result), flush=True)
    return result


def stepping_order(output, buttons):
    """``buttons`` with a stepper's "◀ prev" after its "next ▶" when its step slider is in
    its first half, before it otherwise: a stepper disables the button that has nowhere
    to go, so the one with room goes first and the other then has as many steps back."""
    handle = output.locator(".widget-slider .noUi-handle")
    if handle.count() == 0 or not any("prev" in label for _, label, _ in buttons):
        return buttons
    now, low, high = (float(handle.first.get_attribute(a) or 0)
                      for a in ("aria-valuenow", "aria-valuemin", "aria-valuemax"))
    prev_first = now > (low + high) / 2
    return sorted(buttons, key=lambda c: ("prev" in c[1]) != prev_first)


def row(lesson, name, kind, label, runs, multi):
    if not runs:
        return (lesson, name, kind, label, None, "no change")
    if multi:  # progress (any change), first picture, longest wait between pictures
        change = statistics.median(r["first_change"] for r in runs)
        pictures = [r for r in runs if "first" in r]
        if not pictures:
            return (lesson, name, kind, label, round(change), "first change; no picture")
        first = statistics.median(r["first"] for r in pictures)
        gap = max(r["gap"] for r in pictures)
        return (lesson, name, kind, label, round(change),
                f"first change; first picture {first:.0f} ms, longest wait {gap:.0f} ms")
    pictures = [r for r in runs if r["picture"]]
    if not pictures:  # the control changes text only (or shows a picture that was there)
        return (lesson, name, kind, label, round(statistics.median(r["last"] for r in runs)),
                "text only")
    note = "" if len(pictures) == len(runs) else f"{len(pictures)} of {len(runs)} changed a picture"
    return (lesson, name, kind, label, round(statistics.median(r["last"] for r in pictures)), note)


def markdown(rows):
    lines = ["| lesson | widget | control | median ms | |", "|---|---|---|---:|---|"]
    for lesson, name, kind, label, ms, note in rows:
        lines.append(f"| {lesson[:2]} | {name} | {kind} {label!s} | "
                     f"{'—' if ms is None else ms} | {note} |")
    return "\n".join(lines)


def add_windowing_option(parser, default="none"):
    """``--windowing``: JupyterLab's notebook ``windowingMode`` for the server started here."""
    parser.add_argument("--windowing", default=default,
                        help=f"JupyterLab's notebook windowingMode (default {default}): "
                             "contentVisibility (JupyterLab's default, which a learner's "
                             "./dev lab keeps: off-screen cells are not laid out) or none "
                             "(the browser test's: every cell laid out)")


def use_windowing(mode):
    """Serve the notebooks with ``windowingMode`` = ``mode`` (in the browser test's settings)."""
    lab.LAB_SETTINGS["@jupyterlab/notebook-extension/tracker.jupyterlab-settings"] = {
        "windowingMode": mode}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="comma-separated parts of lesson names")
    parser.add_argument("--repeat", type=int, default=5, help="inputs per control (default 5)")
    parser.add_argument("--json", help="write the rows here too")
    add_windowing_option(parser, default="contentVisibility")  # what a learner's lab shows
    args = parser.parse_args()
    use_windowing(args.windowing)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("stopped"))  # still stop the server
    lessons = [n for n in lessons_with_widgets(lab.LESSONS)
               if not args.only or any(p in n for p in args.only.split(","))]
    from playwright.sync_api import sync_playwright

    chromium = lab.CHROMIUM if pathlib.Path(lab.CHROMIUM).exists() else None
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="browser-latency-"))
    root = tmp / "lessons"
    shutil.copytree(lab.LESSONS, root, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    rows = []
    try:
        with lab.serve_jupyterlab(root, tmp) as base_url, sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium, args=lab.CHROMIUM_FLAGS)
            for lesson in lessons:
                rows += bench_lesson(browser, base_url, lesson, args.repeat)
            browser.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(markdown(rows))
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
