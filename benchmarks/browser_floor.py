"""The floor under a widget's picture in JupyterLab in Chromium: input → picture, ~0 kernel work.

Not a test and not part of ``./dev test``. It writes a small notebook into a
temporary folder and serves it with the browser test's JupyterLab
(``tests/browser/conftest.py``, as ``browser_latency.py`` does). The notebook
shows one slider per *case*; each slider's observer puts bytes made before
(a few variants, taken in turn) into the case's target widget, so the kernel
does next to nothing (< 1 ms) and what is left is transport and the browser:

- ``html``: an ``HTML`` widget's text (no picture: the floor of any control);
- ``png 1x1``: an ``Image`` with a 1×1 PNG;
- ``png 760x500``: an ``Image`` with a plot at 1× pixels (~65 KB);
- ``png 1520x1000``: a real widget picture (``TensorPanel`` heatmaps drawn by
  ``widgets/_render.py``, 2× pixels, ~160 KB: what every view sends today);
- ``palette 1520x1000`` and ``jpeg 1520x1000``: the same picture in 256 colours
  (``compact_png``) and as JPEG;
- ``bitmap``, ``decoder``, ``raw 1520x1000`` (when anywidget is installed): the
  same picture through an anywidget view that draws into a ``<canvas>``: the PNG
  decoded by ``createImageBitmap(Blob)``, by WebCodecs' ``ImageDecoder`` (no Blob),
  or its RGBA pixels (6 MB) put synchronously with ``putImageData``.

Inputs are interleaved (case A, B, C, ..., then again), each an arrow key on
the case's slider, timed in the page from the capturing ``keydown`` to the new
picture decoded (``img.decode()`` after ``src`` changed), to the text changed
(``html``), or to the canvas drawn (the canvas view's ``data-drawn`` attribute);
``frame`` adds the next animation frame (when it can be painted).

``--trace DIR`` then records a Chromium performance trace (``Tracing.start``
through playwright's ``browser.start_tracing``) of a few inputs of one case and
prints, per input, the websocket messages, loads and decodes on a time line, each
thread's busy time, the main thread's tasks and the JavaScript functions that ran
(V8's sampling profile). ``--lesson05`` times "run N steps" clicks on lesson 05's
TrainingStepper (its cell active or not) up to its first change, and traces one.
``--windowing`` sets JupyterLab's notebook ``windowingMode`` (default ``none``,
the browser test's). Results: benchmarks/README.md, "The floor under a picture".

Usage::

    python benchmarks/browser_floor.py --repeat 15
    python benchmarks/browser_floor.py --repeat 3 --trace /tmp/trace --trace-case "png 1520x1000"
    python benchmarks/browser_floor.py --repeat 0 --lesson05 --trace /tmp/trace
"""
from __future__ import annotations

import argparse
import collections
import json
import pathlib
import shutil
import signal
import statistics
import sys
import tempfile
import textwrap

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.browser_latency import (  # noqa: E402
    add_windowing_option, use_windowing, widget_outputs)
from tests.browser import conftest as lab  # noqa: E402  (the browser test's server)
from tests.browser.test_jupyterlab import (  # noqa: E402
    PANEL, open_notebook, run_all_cells, wait_until_all_ran)

#: the notebook's code: the pictures, made once, then one slider + target per case
SETUP = textwrap.dedent(r'''
    import io, numpy as np, ipywidgets as W
    from PIL import Image
    from widgets._render import Canvas, TensorPanel, compact_png, pixels_png

    def plot(seed, ncols, width, height, dpi):
        canvas = Canvas(ncols=ncols, width=width, height=height, dpi=dpi)
        panels = [TensorPanel(canvas, i, f"weight {i}") for i in range(ncols)]
        rng = np.random.default_rng(seed)
        for panel in panels:
            panel.show(rng.standard_normal((64, 96)))
        return canvas.png()

    def jpeg(png):
        out = io.BytesIO()
        Image.open(io.BytesIO(png)).convert("RGB").save(out, format="jpeg", quality=90)
        return out.getvalue()

    VARIANTS = 4
    big = [plot(seed, 2, 7.6, 5.0, 200) for seed in range(VARIANTS)]
    small = [plot(seed, 2, 7.6, 5.0, 100) for seed in range(VARIANTS)]
    dot = [pixels_png(np.full((1, 1, 3), 60 * i, np.uint8)) for i in range(VARIANTS)]
    CASES = {
        "html": [f"<b>value {i}</b> and some text" for i in range(VARIANTS)],
        "png 1x1": dot, "png 760x500": small, "png 1520x1000": big,
        "palette 1520x1000": [compact_png(p) for p in big],
        "jpeg 1520x1000": [jpeg(p) for p in big],
    }
    # the alternatives: anywidget views that draw the bytes into a <canvas>; each marks the
    # canvas (data-drawn) when drawn. bitmap: createImageBitmap(Blob), then
    # transferFromImageBitmap; decoder: WebCodecs' ImageDecoder on the bytes (no Blob);
    # raw: the RGBA pixels themselves (6 MB), put synchronously (putImageData)
    DRAW = {
        "bitmap": """
          bitmap = await createImageBitmap(new Blob([value], {type: "image/png"}));""",
        "decoder": """
          const decoder = new ImageDecoder({type: "image/png",
            data: new Uint8Array(value.buffer, value.byteOffset, value.byteLength)});
          bitmap = await createImageBitmap((await decoder.decode()).image);
          decoder.close();""",
    }
    ESM = """
    function render({ model, el }) {
      const canvas = document.createElement("canvas");
      canvas.style.cssText = "display: block; width: 100%; height: auto;";
      el.appendChild(canvas);
      const raw = model.get("kind") === "raw";
      const context = canvas.getContext(raw ? "2d" : "bitmaprenderer");
      let asked = 0, drawn = 0;
      async function draw() {
        const ticket = ++asked, value = model.get("value");
        if (raw) {
          const [w, h] = [model.get("pixels_width"), model.get("pixels_height")];
          [canvas.width, canvas.height] = [w, h];
          const data = new Uint8ClampedArray(value.buffer, value.byteOffset, value.byteLength);
          context.putImageData(new ImageData(data, w, h), 0, 0);
        } else {
          let bitmap;
          if (model.get("kind") === "bitmap") {BITMAP} else {DECODER}
          if (ticket !== asked) { bitmap.close(); return; }  // a newer one came meanwhile
          [canvas.width, canvas.height] = [bitmap.width, bitmap.height];
          context.transferFromImageBitmap(bitmap);
        }
        canvas.dataset.drawn = String(++drawn);
      }
      model.on("change:value", draw);
      draw();
    }
    export default { render };
    """.replace("{BITMAP}", "{" + DRAW["bitmap"] + "}").replace("{DECODER}", "{" + DRAW["decoder"] + "}")
    try:
        import anywidget, traitlets

        class CanvasPicture(anywidget.AnyWidget):
            _esm = ESM
            value = traitlets.Bytes(b"").tag(sync=True)
            kind = traitlets.Unicode("bitmap").tag(sync=True)
            pixels_width = traitlets.Int(0).tag(sync=True)
            pixels_height = traitlets.Int(0).tag(sync=True)

        def rgba(png):
            return np.asarray(Image.open(io.BytesIO(png)).convert("RGBA")).tobytes()

        CASES["bitmap 1520x1000"] = CASES["decoder 1520x1000"] = big
        CASES["raw 1520x1000"] = [rgba(p) for p in big]
    except ImportError:  # anywidget is not installed: only the ipywidgets cases
        anywidget = None

    def target(name):
        if name == "html":
            return W.HTML(CASES[name][0])
        kind = name.split()[0]
        if kind in ("bitmap", "decoder", "raw"):
            return CanvasPicture(value=CASES[name][0], kind=kind, pixels_width=1520,
                                 pixels_height=1000, layout=W.Layout(width="760px"))
        fmt = "jpeg" if kind == "jpeg" else "png"
        return W.Image(value=CASES[name][0], format=fmt, layout=W.Layout(width="760px"))

    def case(name):
        slider = W.IntSlider(0, 0, 1000, description=name)
        shown = target(name)
        def update(change, shown=shown, values=CASES[name]):
            shown.value = values[change["new"] % len(values)]
        slider.observe(update, "value")
        return W.VBox([slider, shown])

    print({name: [len(v) for v in values] for name, values in CASES.items()})
    ''')
CELL = 'case({name!r})'

#: watch one output: t0 at the input event, then the first picture decoded / text / canvas drawn
ARM = """([out, kind]) => {
  const s = {t0: null, done: null, frame: null};
  window.__floor = s;
  const start = () => { if (s.t0 === null) { s.t0 = performance.now(); performance.mark('floor-input'); } };
  window.addEventListener('keydown', start, {capture: true, once: true});
  const finish = () => {
    if (s.done !== null) return;
    s.done = performance.now();
    performance.mark('floor-done');
    requestAnimationFrame(() => { s.frame = performance.now(); });
  };
  s.observer = new MutationObserver(records => {
    for (const r of records) {
      if (kind === 'img' && r.type === 'attributes' && r.target.tagName === 'IMG')
        r.target.decode().then(finish, () => {});
      else if (kind === 'canvas' && r.type === 'attributes' && r.attributeName === 'data-drawn')
        finish();
      else if (kind === 'text' && r.type !== 'attributes') finish();
    }
  });
  const shown = out.querySelector('.widget-vbox').lastElementChild;  // not the slider's readout
  s.observer.observe(shown, {subtree: true, childList: true, characterData: true,
                           attributes: true, attributeFilter: ['src', 'data-drawn']});
}"""
WAIT = """() => new Promise(resolve => {
  const s = window.__floor, began = performance.now();
  const tick = () => {
    if ((s.frame !== null) || performance.now() - began > 5000) {
      s.observer.disconnect();
      resolve({t0: s.t0, done: s.done, frame: s.frame});
    } else setTimeout(tick, 10);
  };
  tick();
})"""


def write_notebook(folder, names):
    cells = [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
              "source": source} for source in [SETUP] + [CELL.format(name=n) for n in names]]
    notebook = {"cells": cells, "metadata": {"kernelspec": {"name": "python3",
                "display_name": "Python 3 (ipykernel)", "language": "python"}},
                "nbformat": 4, "nbformat_minor": 5}
    (folder / "floor.ipynb").write_text(json.dumps(notebook))


def kind_of(name):
    return "text" if name == "html" else "img" if name.split()[0] in ("png", "palette", "jpeg") \
        else "canvas"


def one_input(page, output, name):
    """One arrow key on the case's slider: ``(ms to the picture, ms to the next frame)``."""
    output.scroll_into_view_if_needed()
    page.wait_for_timeout(150)  # scrolling painted; the page is quiet
    page.evaluate(ARM, [output.element_handle(), kind_of(name)])
    output.locator(".widget-slider .noUi-handle").first.press("ArrowRight")
    seen = page.evaluate(WAIT)
    if seen["t0"] is None or seen["done"] is None:
        return None
    return seen["done"] - seen["t0"], (seen["frame"] or seen["done"]) - seen["t0"]


def case_names(page):
    names = []
    for i in range(widget_outputs(page).count()):
        names.append(widget_outputs(page).nth(i).locator(".widget-label").first.text_content().strip())
    return names


def measure(page, names, repeat):
    """Interleaved inputs: ``{case: [(picture ms, frame ms), ...]}``."""
    outputs = {n: widget_outputs(page).nth(i) for i, n in enumerate(case_names(page))}
    times = collections.defaultdict(list)
    for _ in range(repeat):
        for name in names:
            result = one_input(page, outputs[name], name)
            if result:
                times[name].append(result)
    return times


def table(times):
    lines = ["| case | n | median ms to picture | spread (min–max) | median ms to next frame |",
             "|---|---:|---:|---|---:|"]
    for name, runs in times.items():
        done = [r[0] for r in runs]
        frame = [r[1] for r in runs]
        lines.append(f"| {name} | {len(runs)} | {statistics.median(done):.0f} | "
                     f"{min(done):.0f}–{max(done):.0f} | {statistics.median(frame):.0f} |")
    return "\n".join(lines)


# -- the trace ------------------------------------------------------------------------------
def load_trace(path):
    data = json.loads(pathlib.Path(path).read_text())
    return data["traceEvents"] if isinstance(data, dict) else data


def thread_names(events):
    names = {}
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            names[(e["pid"], e["tid"])] = e["args"]["name"]
    return names


def windows(events, start="floor-input", end="floor-done"):
    """``[(t_start, t_end)]`` in trace µs, from the page's ``performance.mark`` pairs."""
    marks = sorted((e["ts"], e["name"]) for e in events
                   if e.get("name") in (start, end) and "blink.user_timing" in e.get("cat", ""))
    pairs, began = [], None
    for ts, name in marks:
        if name == start:
            began = ts
        elif began is not None:
            pairs.append((began, ts))
            began = None
    return pairs


#: slices that only wrap others (their children say what ran)
WRAPPERS = {"RunTask", "ThreadControllerImpl::RunTask", "ThreadPool_RunTask", "LatencyInfo.Flow",
            "SimpleWatcher::OnHandleReady", "TaskGraphRunner::RunTask", "AsyncTask Run",
            "BlinkScheduler_PerformMicrotaskCheckpoint"}
#: the events of the timeline: the websocket's messages, resource (Blob URL) loads, decodes
MARKS = {"WebSocketSend", "WebSocketReceive", "ResourceSendRequest", "ResourceFinish",
         "Decode Image", "EventDispatch"}


def label(e):
    """A slice's name and, where the trace says, what it is about (an event type, a function)."""
    data = (e.get("args") or {}).get("data") or {}
    about = data.get("type") or data.get("functionName") or ""
    if not about and data.get("url"):
        about = data["url"].split("/")[-1][:30]
    return e["name"] + (f"[{about}]" if about else "")


def top_level(slices):
    """``[(slice, [slices inside it])]``: each thread's outermost slices, in order."""
    tops, end = [], -1
    for e in sorted(slices, key=lambda e: (e["ts"], -e["dur"])):
        if e["ts"] >= end:
            tops.append((e, []))
            end = e["ts"] + e["dur"]
        else:
            tops[-1][1].append(e)
    return tops


def timeline(events, window):
    """Lines ``+ms  what``: the messages, loads and decodes between input and picture."""
    t0, t1 = window
    lines = []
    for e in sorted(events, key=lambda e: e["ts"]):
        if e["name"] not in MARKS or not t0 - 1000 <= e["ts"] <= t1:
            continue
        data = (e.get("args") or {}).get("data") or {}
        if e["name"] == "EventDispatch" and data.get("type") not in ("keydown", "load"):
            continue
        if e["name"] == "Decode Image" and e.get("dur", 0) < 1000:
            continue
        what = label(e)
        if "dataLength" in data:
            what += f" {data['dataLength']} bytes"
        if e.get("dur"):
            what += f" ({e['dur'] / 1000:.1f} ms, thread {e['tid']})"
        lines.append(f"    +{(e['ts'] - t0) / 1000:6.1f}  {what}")
    return lines


def js_samples(events):
    """``[(ts µs, µs, [function names, outermost first])]``: V8's CPU profile samples in the trace
    (category ``disabled-by-default-v8.cpu_profiler``), main thread and workers together."""
    nodes, starts, samples, clock = {}, {}, [], {}
    for e in events:
        if e.get("name") == "Profile":
            starts[e["id"]] = e["args"]["data"]["startTime"]
    for e in sorted((e for e in events if e.get("name") == "ProfileChunk"), key=lambda e: e["ts"]):
        data = e["args"]["data"]
        profile = data.get("cpuProfile", {})
        for node in profile.get("nodes", []):
            frame = node["callFrame"]
            name = frame.get("functionName") or "(anonymous)"
            source = frame.get("url", "").split("/")[-1].split("?")[0]
            nodes[(e["id"], node["id"])] = (f"{name} {source}".strip(), node.get("parent"))
        t = clock.get(e["id"], starts.get(e["id"], 0))
        for node_id, delta in zip(profile.get("samples", []), data.get("timeDeltas", [])):
            t += delta
            stack, key = [], (e["id"], node_id)
            while key in nodes:
                stack.append(nodes[key][0])
                key = (e["id"], nodes[key][1])
            samples.append((t, delta, stack[::-1]))
        clock[e["id"]] = t
    return samples


def js_functions(events, window, top=25):
    """The JavaScript functions that ran between input and picture: ms inclusive (a function
    counted once per sample), heaviest first, leaving out V8's own (program), (idle), ..."""
    samples = [s for s in js_samples(events) if window[0] <= s[0] <= window[1]]
    inclusive, busy = collections.Counter(), 0.0
    for _, delta, stack in samples:
        names = {name for name in stack if not name.startswith("(")}
        busy += delta if names else 0
        for name in names:
            inclusive[name] += delta
    if not busy:
        return []
    lines = [f"    JavaScript: {busy / 1000:.0f} ms ({len(samples)} samples)"]
    lines += [f"      {us / 1000:5.1f} ms  {name}" for name, us in inclusive.most_common(top)]
    return lines


def report_trace(events, label_text, min_ms=1.0):
    """Per input: the timeline, each thread's busy time in the window, and the main thread's
    tasks of ``min_ms`` or more (with the slices inside that took most of each)."""
    print(f"\n### trace: {label_text}")
    names = thread_names(events)
    for n, (t0, t1) in enumerate(windows(events)):
        print(f"\ninput {n}: {(t1 - t0) / 1000:.1f} ms from input to picture")
        print("\n".join(timeline(events, (t0, t1)) + js_functions(events, (t0, t1))))
        threads = collections.defaultdict(list)
        for e in events:
            if e.get("ph") == "X" and e.get("dur") is not None and e["ts"] < t1 \
                    and e["ts"] + e["dur"] > t0:
                threads[(e["pid"], e["tid"])].append(e)
        for key, slices in threads.items():
            tops = top_level(slices)
            busy = sum(min(e["ts"] + e["dur"], t1) - max(e["ts"], t0) for e, _ in tops) / 1000
            if busy < 2:
                continue
            print(f"  {names.get(key, '?')} (thread {key[1]}): busy {busy:.1f} ms")
            if names.get(key) != "CrRendererMain":
                continue
            for e, inside in tops:
                if e["dur"] >= min_ms * 1000:
                    seen = []
                    for k in inside:
                        if k["name"] not in WRAPPERS and k["dur"] >= 0.25 * e["dur"] \
                                and label(k) not in seen:
                            seen.append(label(k))
                    print(f"    +{(e['ts'] - t0) / 1000:6.1f} {e['dur'] / 1000:5.1f} ms  "
                          + " > ".join(seen[:6]))


CATEGORIES = ["devtools.timeline", "disabled-by-default-devtools.timeline", "blink.user_timing",
              "v8.execute", "toplevel", "blink", "loading", "cc", "gpu", "netlog", "net",
              "disabled-by-default-devtools.timeline.frame", "benchmark", "latencyInfo",
              "input", "disabled-by-default-devtools.timeline.stack", "rail",
              "disabled-by-default-v8.cpu_profiler"]


def trace_case(browser, page, names, name, count, path):
    outputs = {n: widget_outputs(page).nth(i) for i, n in enumerate(case_names(page))}
    browser.start_tracing(page=page, path=str(path), categories=CATEGORIES)
    for _ in range(count):
        one_input(page, outputs[name], name)
    browser.stop_tracing()
    report_trace(load_trace(path), name)


#: lesson 05: mark the click on "run N steps", then the first change of the widget (its status)
RUN_N_ARM = """out => {
  const s = {t0: null, first: null};
  window.__runn = s;
  window.addEventListener('mousedown', () => { s.t0 = performance.now();
    performance.mark('floor-input'); }, {capture: true, once: true});
  s.observer = new MutationObserver(() => { if (s.first === null && s.t0 !== null) {
    s.first = performance.now(); performance.mark('floor-done'); } });
  s.observer.observe(out, {subtree: true, childList: true, characterData: true, attributes: true});
}"""


def click_run(page, output):
    """One click on "run N steps": ms from the mousedown to the widget's first change; waits
    until the run is over."""
    output.evaluate(RUN_N_ARM)
    output.locator("button", has_text="run N steps").first.click()
    page.wait_for_function("() => window.__runn.first !== null", timeout=30_000)
    first = page.evaluate("() => window.__runn.first - window.__runn.t0")
    page.wait_for_timeout(300)
    output.locator("button:has-text('stop'):disabled").wait_for(timeout=60_000)
    page.wait_for_timeout(1000)
    return first


def trace_lesson05(browser, base_url, path, pairs=3):
    """Lesson 05's TrainingStepper, "run N steps" (N = 20): ``pairs`` times a click while
    another cell is the notebook's active one, then one in the active cell (untraced); then
    one traced click in the active cell."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        open_notebook(page, base_url, "05-training-loop-and-optimizers")
        run_all_cells(page)
        wait_until_all_ran(page)
        output = page.locator(f"{PANEL} .jp-OutputArea-output:has(> .jupyter-widgets)",
                              has=page.locator("button", has_text="run N steps")).first
        output.locator(".widget-text input").first.fill("20")
        output.locator(".widget-text input").first.press("Enter")
        inactive, active = [], []
        for _ in range(pairs):
            page.locator(f"{PANEL} .jp-Cell .jp-InputPrompt").first.click()  # another cell
            output.scroll_into_view_if_needed()
            page.wait_for_timeout(1000)
            inactive.append(click_run(page, output))
            active.append(click_run(page, output))
        print(f"\nlesson 05 run N steps, ms from click to first change: its cell not active "
              f"{[round(t) for t in inactive]}, active {[round(t) for t in active]}")
        browser.start_tracing(page=page, path=str(path), categories=CATEGORIES)
        first = click_run(page, output)
        browser.stop_tracing()
        print(f"traced (its cell active): first change {first:.0f} ms after the click")
        report_trace(load_trace(path), "lesson 05 run N steps, click → first change")
    finally:
        page.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15, help="inputs per case (default 15)")
    parser.add_argument("--trace", help="a folder: also record Chromium traces there")
    parser.add_argument("--trace-case", action="append",
                        help="case(s) to trace (default: png 1520x1000)")
    parser.add_argument("--trace-count", type=int, default=3, help="inputs per traced case")
    parser.add_argument("--lesson05", action="store_true",
                        help="time 'run N steps' clicks on lesson 05 and trace one (with --trace)")
    parser.add_argument("--cases", help="comma-separated case names to time (default: all)")
    add_windowing_option(parser)
    args = parser.parse_args()
    use_windowing(args.windowing)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("stopped"))
    from playwright.sync_api import sync_playwright

    chromium = lab.CHROMIUM if pathlib.Path(lab.CHROMIUM).exists() else None
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="browser-floor-"))
    root = tmp / "lessons"
    shutil.copytree(lab.LESSONS, root, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    names = ["html", "png 1x1", "png 760x500", "png 1520x1000", "palette 1520x1000",
             "jpeg 1520x1000"]
    try:
        import anywidget  # noqa: F401
        names += ["bitmap 1520x1000", "decoder 1520x1000", "raw 1520x1000"]
    except ImportError:
        pass
    write_notebook(root, names)
    trace_dir = pathlib.Path(args.trace) if args.trace else None
    if trace_dir:
        trace_dir.mkdir(parents=True, exist_ok=True)
    try:
        with lab.serve_jupyterlab(root, tmp) as base_url, sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium, args=lab.CHROMIUM_FLAGS)
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            open_notebook(page, base_url, "floor")
            run_all_cells(page)
            wait_until_all_ran(page)
            page.wait_for_timeout(1000)
            if args.repeat:
                timed = args.cases.split(",") if args.cases else names
                measure(page, timed, 2)  # warm up: the first inputs compile the views' code
                times = measure(page, timed, args.repeat)
                print(table(times), flush=True)
            if trace_dir:
                for name in args.trace_case or ["png 1520x1000"]:
                    trace_case(browser, page, names, name, args.trace_count,
                               trace_dir / f"{name.replace(' ', '-')}.json")
            page.close()
            if trace_dir and args.lesson05:
                trace_lesson05(browser, base_url, trace_dir / "lesson05-run-n.json")
            browser.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
