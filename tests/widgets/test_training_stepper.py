"""TrainingStepperModel (pure Python) and the TrainingStepper view, driven headlessly."""
import asyncio

import numpy as np
import pytest
from widget_helpers import copy_weights, is_png, png_bytes

import edutorch as et
import edutorch.nn as nn
from edutorch.datasets import load_digits
from widgets import StageResult, TrainingStepper, TrainingStepperModel
from widgets._render import html_style, plain_lines
from widgets.training_stepper import OPTIMIZERS, SCHEDULERS, STAGES


def digits(lib=et, n_train=256, n_test=128):
    """A slice of the shipped 8x8 digits (no download), as ``lib`` tensors."""
    x, y = load_digits("train")
    xt, yt = load_digits("test")
    arrays = (x.numpy()[:n_train], y.numpy()[:n_train], xt.numpy()[:n_test], yt.numpy()[:n_test])
    x, y, xt, yt = (lib.tensor(a) for a in arrays)
    return (x, y), (xt, yt)


def small_model(lib=et):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(64, 16), lib.nn.ReLU(), lib.nn.Linear(16, 10))


def stepper(model=None, lib=et, **kwargs):
    train, test = digits(lib)
    return TrainingStepperModel(model if model is not None else small_model(lib), train, test,
                                **kwargs)


def by_name(result):
    return {p.name: p for p in result.params}


def test_one_iteration_stage_by_stage():
    m = stepper(optimizer="SGD", lr=0.5)
    results = [m.next_stage() for _ in STAGES]
    assert [r.stage for r in results] == list(STAGES)
    assert all(isinstance(r, StageResult) for r in results)
    zero, forward, loss, backward, step = results
    assert zero.code == "optimizer.zero_grad()" and step.code == "optimizer.step()"
    assert all(p.grad_before is None and p.grad_after is None for p in zero.params)
    assert forward.output.shape == (32, 10) and 0.0 <= forward.accuracy <= 1.0
    assert all(p.delta is None for r in results[:4] for p in r.params)
    expected = et.nn.functional.cross_entropy(et.tensor(forward.output), m.y).item()
    assert loss.loss == pytest.approx(expected, rel=1e-6)
    assert all(p.grad_before is None and p.grad_after is not None for p in backward.params)
    # plain SGD: Δ = -lr * grad, and it keeps no state
    for p in step.params:
        np.testing.assert_allclose(p.delta, -0.5 * by_name(backward)[p.name].grad_after,
                                   rtol=1e-4, atol=1e-6)
        assert p.state == {}
    assert step.lr == 0.5 and m.steps == 1 and m.history[0]["loss"] == pytest.approx(loss.loss)
    assert "largest |Δ|" in step.summary() and "cleared" in zero.summary()
    again = m.next_stage()  # the next batch: zero_grad clears the grads just filled
    assert again.stage == "zero_grad" and again.iteration == 1
    assert all(p.grad_before is not None and p.grad_after is None for p in again.params)
    assert "of 4 parameters cleared (now None)" in again.summary()


def test_momentum_and_adam_state_as_pytorch_keeps_it():
    m = stepper(optimizer="SGD+momentum", lr=0.1)
    result = m.finish_iteration()
    grads = {n: p.grad.numpy() for n, p in m.model.named_parameters()}
    for p in result.params:  # first step: the buffer is the gradient itself
        np.testing.assert_allclose(p.state["momentum_buffer"], grads[p.name], rtol=1e-6)
    assert m.state_keys() == ["momentum_buffer"]

    m.set_optimizer("Adam")  # a fresh optimizer: empty state
    assert m.state_keys() == []
    result = m.finish_iteration()
    grads = {n: p.grad.numpy() for n, p in m.model.named_parameters()}
    assert m.state_keys() == ["step", "exp_avg", "exp_avg_sq"]
    for p in result.params:
        assert p.state["step"] == 1.0
        np.testing.assert_allclose(p.state["exp_avg"], 0.1 * grads[p.name], rtol=1e-5, atol=1e-9)
        np.testing.assert_allclose(p.state["exp_avg_sq"], 0.001 * grads[p.name] ** 2, rtol=1e-4,
                                   atol=1e-12)
        # Adam's first step moves every weight with a gradient by about lr
        moved = np.abs(p.delta[np.abs(grads[p.name]) > 1e-6])
        np.testing.assert_allclose(moved, 0.1, rtol=1e-2)


@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_every_optimizer_matches_real_torch(name, real_torch):
    ours = stepper(optimizer=name, lr=0.05)
    twin = copy_weights(real_torch, ours.model, small_model(real_torch))
    theirs = stepper(twin, real_torch, optimizer=name, lr=0.05)
    for _ in range(3 * len(STAGES)):
        a, b = ours.next_stage(), theirs.next_stage()
        assert (a.stage, a.loss is None) == (b.stage, b.loss is None)
        if a.loss is not None:
            assert a.loss == pytest.approx(b.loss, rel=1e-5)
        for pa, pb in zip(a.params, b.params):
            assert pa.name == pb.name and sorted(pa.state) == sorted(pb.state)
            if pa.delta is not None:
                np.testing.assert_allclose(pa.delta, pb.delta, rtol=1e-3, atol=1e-6)
            for key, value in pa.state.items():
                np.testing.assert_allclose(value, pb.state[key], rtol=1e-4, atol=1e-7)


def test_lr_and_scheduler_change_between_steps():
    m = stepper(optimizer="SGD", lr=0.1)
    m.finish_iteration()
    m.set_lr(0.01)
    for _ in range(4):
        result = m.next_stage()
    step = m.next_stage()
    assert step.lr == 0.01
    np.testing.assert_allclose(step.params[0].delta, -0.01 * result.params[0].grad_after,
                               rtol=1e-4, atol=1e-8)
    m.set_scheduler("ExponentialLR")
    step = m.finish_iteration()
    assert step.lr == pytest.approx(0.01) and step.next_lr == pytest.approx(0.0099)
    assert "scheduler: lr → 0.0099" in step.summary()
    assert [text.strip() for _, text in m.code_lines()][-1] == "scheduler.step()"
    assert m.setup_code() == [
        "optimizer = torch.optim.SGD(", "    model.parameters(), lr=0.01)",
        "scheduler = torch.optim.lr_scheduler.ExponentialLR(", "    optimizer, gamma=0.99)"]
    m.set_scheduler("none")
    assert m.current_lr() == 0.01 and len(m.code_lines()) == 1 + len(STAGES)
    with pytest.raises(ValueError, match="unknown optimizer 'LBFGS'"):
        m.set_optimizer("LBFGS")
    with pytest.raises(ValueError, match="unknown scheduler"):
        m.set_scheduler("cyclic")
    assert set(SCHEDULERS) == {"none", "StepLR", "ExponentialLR", "CosineAnnealingLR"}


def test_run_trains_in_chunks_and_evaluates_the_held_out_set():
    m = stepper(optimizer="Adam", lr=0.01)
    m.next_stage()  # mid-iteration: run finishes this batch first
    progress = list(m.run(12, chunk=5))
    assert progress == [(5, 12), (10, 12), (12, 12)]
    assert m.steps == 12 and len(m.history) == 12 and m.next_stage_name == "zero_grad"
    assert [e["step"] for e in m.evaluations] == [5, 10, 12]  # one evaluation per chunk
    held_out = [e["loss"] for e in m.evaluations]
    assert held_out == sorted(held_out, reverse=True)  # Adam on the digits: it learns
    assert m.history[-1]["loss"] < m.history[0]["loss"]


def test_a_run_stops_between_two_iterations_when_asked():
    m = stepper(optimizer="SGD", lr=0.1)
    seen = []
    for done, total in m.run(1000, chunk=3):
        seen.append(done)
        if done == 6:
            m.request_stop()
    assert seen == [3, 6, 6] and m.steps == 6  # stopped at once, one last report
    assert not m.stopping  # the flag is reset: the next run goes
    assert m.run_all(4, chunk=2) == 4 and m.steps == 10


def test_evaluation_leaves_the_training_mode_and_grads_alone():
    m = stepper()
    m.finish_iteration()
    grads = [p.grad.numpy().copy() for p in m.model.parameters()]
    record = m.evaluate()
    assert m.model.training and set(record) == {"step", "loss", "accuracy"}
    for g, p in zip(grads, m.model.parameters()):
        np.testing.assert_array_equal(g, p.grad.numpy())
    without = TrainingStepperModel(small_model(), digits()[0])
    assert without.evaluate() is None


def test_the_modules_keep_their_own_modes_a_frozen_body_in_eval_stays_there():
    """Fine-tuning: the body (with a BatchNorm) is frozen and in eval(), the head trains.
    Stepping and evaluating leave each module in the mode the user gave it, so the
    pretrained running statistics do not move and the body's .grad stays None."""
    et.manual_seed(0)
    body = nn.Sequential(nn.Linear(64, 16), nn.BatchNorm1d(16), nn.ReLU())
    model = nn.Sequential(body, nn.Linear(16, 10))
    body.requires_grad_(False)
    body.eval()
    mean, head = body[1].running_mean.clone(), model[1].weight.detach().clone()
    m = stepper(model)
    m.run_all(3, chunk=1)  # three steps, the held-out set evaluated after each
    assert model.training and model[1].training and not body.training and not body[1].training
    np.testing.assert_array_equal(body[1].running_mean.numpy(), mean.numpy())
    assert all(p.grad is None for p in body.parameters())
    assert not np.array_equal(model[1].weight.detach().numpy(), head.numpy())  # the head learned


def test_regression_has_no_accuracy():
    et.manual_seed(0)
    x = et.randn(40, 3)
    y = x.sum(1, keepdim=True)
    m = TrainingStepperModel(nn.Linear(3, 1), (x, y), loss_fn=nn.MSELoss(), batch_size=8)
    m.next_stage()
    assert m.next_stage().accuracy is None


# -- the view ----------------------------------------------------------------------------
def view_of(**kwargs):
    train, test = digits()
    return TrainingStepper(small_model(), train, test, **kwargs)


def test_view_steps_through_the_loop():
    view = view_of(optimizer="SGD+momentum", lr=0.1)
    assert repr(view) == "TrainingStepper(Sequential, SGD+momentum, 0 steps, next: zero_grad)"
    assert "▶     optimizer.zero_grad()" in view.code.value
    first = png_bytes(view.image)
    images = []
    for stage in STAGES:
        view.next_button.click()
        assert view.model.last.stage == stage
        assert f"background:#ffe8a3;'>      {view.model.last.code}" in view.code.value.replace(
            "&#x27;", "'")
        images.append(png_bytes(view.image))
    assert all(is_png(i) for i in images) and len(set(images + [first])) == 6
    assert "Δ 0.weight (update)" in view.left_title.value
    assert "state[&#x27;momentum_buffer&#x27;]" in view.right_title.value
    assert "momentum_buffer" in view.table.value and list(view.state_key.options) == [
        "momentum_buffer"]
    view.parameter.value = "2.bias"
    assert "Δ 2.bias" in view.left_title.value
    assert is_png(view.curves_image.value)


def test_view_says_a_frozen_parameter_was_skipped_by_step():
    """With Adam on a partly frozen model, a frozen parameter's panel says why it has no
    optimizer state (no .grad, so step() skipped it); a trained one shows its exp_avg."""
    train, test = digits()
    model = small_model()
    model[0].requires_grad_(False)
    view = TrainingStepper(model, train, test, optimizer="Adam", lr=0.01)
    for _ in STAGES:
        view.next_button.click()
    view.parameter.value = "0.weight"
    assert view.right_panel.artists["text"].get_text() == "0.weight had no .grad:\nstep() skipped it, no state"
    # the update is no empty heatmap "±0" but says why; the stored text has no empty "right:"
    assert view.left_panel.artists["text"].get_text().startswith("Δ 0.weight = 0:\nstep() skips")
    assert not plain_lines(view.left_title.value) and not plain_lines(view.right_title.value)
    assert not any(line.strip() in ("left:", "right:") for line in view.fallback_text())
    view.parameter.value = "2.weight"
    assert "state[&#x27;exp_avg&#x27;]" in view.right_title.value


def test_view_controls_change_the_optimizer_between_steps():
    view = view_of()
    view.next_button.click()
    view.optimizer.value = "Adam"
    view.lr.value = 0.01
    view.scheduler.value = "StepLR"
    assert view.model.optimizer_name == "Adam" and view.model.current_lr() == 0.01
    assert ("StepLR(</span>\n<span style='color:gray'>    optimizer, step_size=50, gamma=0.5)"
            in view.code.value)
    for _ in range(4):
        view.next_button.click()
    assert list(view.state_key.options) == ["step", "exp_avg", "exp_avg_sq"]
    assert view.state_key.value == "exp_avg"
    view.state_key.value = "step"
    assert view.right_title.value == f"<div style='{html_style()}'></div>"  # a number: a note


def test_view_run_without_an_event_loop_trains_at_once():
    view = view_of(optimizer="Adam", lr=0.01)
    before = png_bytes(view.curves_image)
    view.steps.value = 15
    view.run_button.click()
    assert view.model.steps == 15 and view.progress.value == 15
    assert view.status.value.startswith("15 / 15 steps, held-out accuracy")
    assert png_bytes(view.curves_image) != before and view.stop_button.disabled


def test_view_stop_button_interrupts_a_running_task():
    view = view_of(optimizer="SGD", lr=0.1)

    async def click_run_then_stop():
        task = view.start_run(10_000)
        while view.model.steps == 0:  # the task shows "0 / N", rests, trains its first step
            await asyncio.sleep(0.01)
        assert view.run_button.disabled and not view.stop_button.disabled
        view.stop_button.click()
        await task

    asyncio.run(click_run_then_stop())
    assert 0 < view.model.steps < 100
    assert not view.run_button.disabled and view.stop_button.disabled


def test_view_on_real_torch(real_torch):
    train, test = digits(real_torch)
    view = TrainingStepper(small_model(real_torch), train, test, optimizer="AdamW", lr=0.01)
    for _ in STAGES:
        view.next_button.click()
    view.run(6)
    assert view.model.steps == 7 and is_png(view.image.value)
    assert "exp_avg_sq" in view.table.value


def test_switching_the_optimizer_shows_the_new_empty_state_at_once():
    """After a step with momentum, choosing Adam shows Adam's (empty) state, not the old
    momentum buffer, until Adam's first step."""
    view = TrainingStepper(small_model(), *digits(), optimizer="SGD+momentum", lr=0.01)
    for _ in STAGES:
        view.next_button.click()
    assert "momentum_buffer" in view.table.value
    view.optimizer.value = "Adam"
    assert all(p.state == {} for p in view.model.last.params)
    assert "momentum_buffer" not in view.table.value
    assert view.right_panel.artists["text"].get_text() == (
        "a new Adam: its state is\nempty until its first step()")
    for _ in STAGES:
        view.next_button.click()
    assert "exp_avg" in view.table.value


def test_each_step_reuses_the_buffers_of_the_last_delta_and_its_values_stay_right():
    """A big model's copy for Δ is allocated once: the next step() writes into the last Δ."""
    m = stepper(optimizer="Adam", lr=0.01)
    first = m.finish_iteration()
    first_delta = {p.name: p.delta for p in first.params}
    before = {n: m.values(n) for n in m.names}
    second = m.finish_iteration()
    for p in second.params:
        assert p.delta is first_delta[p.name]  # the same array, overwritten
        np.testing.assert_array_equal(p.delta, m.values(p.name) - before[p.name])
        assert p.delta_norm == pytest.approx(np.linalg.norm(p.delta.astype(np.float64)), rel=1e-9)
        # step() leaves .grad alone: one array before and after, one norm
        assert p.grad_before is p.grad_after and p.grad_before_norm == p.grad_norm
        assert p.grad_norm == pytest.approx(np.linalg.norm(p.grad_after.astype(np.float64)))
    zero_grad, forward = m.next_stage(), m.next_stage()  # the next batch
    assert all(p.grad_before is not None and p.grad_after is None for p in zero_grad.params)
    assert all(p.grad_before is None and p.grad_norm is None for p in forward.params)


def test_stage_results_copy_only_what_the_stage_overwrites():
    """zero_grad keeps the old .grad arrays (no copy); step() copies the values once, for Δ."""
    m = stepper(optimizer="SGD", lr=0.5)
    for _ in STAGES:
        m.next_stage()
    grads = {n: p.grad for n, p in m.model.named_parameters()}
    zero = m.next_stage()
    for p in zero.params:  # the arrays of the tensors zero_grad dropped, not copies
        assert np.shares_memory(p.grad_before, grads[p.name].numpy())
    for _ in STAGES[1:]:
        result = m.next_stage()
    for p in result.params:
        np.testing.assert_allclose(p.delta, -0.5 * by_name(result)[p.name].grad_after,
                                   rtol=1e-4, atol=1e-6)
        assert p.norm == pytest.approx(np.linalg.norm(m.values(p.name)), rel=1e-6)


def test_a_run_in_a_kernel_shows_progress_at_once_and_curves_after_its_first_step(monkeypatch):
    """"run N steps" in a kernel: "0 / N steps" before any training, the curves redrawn
    after the first iteration, then after a chunk when a picture is due (``REDRAW_S`` = 0
    here: every chunk), up to N."""
    import widgets.training_stepper_view as view_module

    monkeypatch.setattr(view_module, "REDRAW_S", 0.0)
    view = view_of(optimizer="SGD", lr=0.1)
    statuses, curves = [], []
    view.status.observe(lambda change: statuses.append(change["new"]), names="value")
    view.curves_image.observe(
        lambda change: curves.append((view.model.steps, change["new"])), names="value")

    async def click_run():
        await view.start_run(11)

    asyncio.run(click_run())
    assert statuses[0] == "0 / 11 steps" and statuses[1].startswith("1 / 11 steps")
    assert [steps for steps, _ in curves] == [1, 6, 11]  # after the first step, then two chunks
    assert view.model.steps == 11 and view.progress.value == 11


def test_a_run_in_a_kernel_sends_pictures_no_faster_than_the_browser_shows_them(monkeypatch):
    """A picture of the curves at most every ``REDRAW_S``: a run shorter than that shows the
    first step's curves and the last ones; the progress bar and the status follow the
    pictures, and say where the run ended."""
    import widgets.training_stepper_view as view_module

    monkeypatch.setattr(view_module, "REDRAW_S", 60.0)
    view = view_of(optimizer="SGD", lr=0.1)
    curves, progress = [], []
    view.curves_image.observe(lambda change: curves.append(view.model.steps), names="value")
    view.progress.observe(lambda change: progress.append(change["new"]), names="value")

    async def click_run():
        await view.start_run(26)

    asyncio.run(click_run())
    assert curves == [1, 26] and progress == [1, 26]
    assert view.status.value.startswith("26 / 26 steps, held-out accuracy")


def test_stop_before_the_first_step_trains_nothing_and_the_next_run_trains():
    """"stop" clicked while the run shows "0 / N" (before its first step): nothing is
    trained, and the next click on "run N steps" trains N steps (the stop is used up)."""
    view = view_of(optimizer="SGD", lr=0.1)

    async def click_run_stop_run():
        task = view.start_run(50)
        await asyncio.sleep(0)  # the task shows "0 / 50 steps" and rests
        view.stop_button.click()
        await task
        assert view.model.steps == 0 and view.status.value.startswith("0 / 50 steps")
        await view.start_run(7)

    asyncio.run(click_run_stop_run())
    assert view.model.steps == 7 and view.progress.value == 7


def test_the_parameter_menu_is_disabled_while_no_parameter_is_shown():
    """Before the first stage and after forward and loss, the pictures show the output or
    the loss: the parameter menu would change nothing, so it is disabled and says why."""
    view = view_of(optimizer="SGD", lr=0.1)
    shown = []
    for _ in range(5):  # zero_grad, forward, loss, backward, step
        shown.append((view.model.next_stage_name, view.parameter.disabled))
        view.next_button.click()
        shown.append((view.model.last.stage, view.parameter.disabled))
    assert shown[0][1] and "no parameter to pick" in TrainingStepper(
        small_model(), *digits()).parameter.tooltip
    assert [disabled for stage, disabled in shown[1::2]] == [False, True, True, False, False]
    assert [stage for stage, _ in shown[1::2]] == ["zero_grad", "forward", "loss", "backward", "step"]
    assert view.parameter.tooltip == "the parameter shown in the pictures"


# -- rendering ahead (issue 25: a control within 100 ms as a person sees it) ---------------
async def rested(view):
    """Let the event loop idle (as a kernel does) until the view rendered ahead everything
    it scheduled."""
    while view.ahead.pending or view.ahead.timer is not None:
        await asyncio.sleep(0.02)


def count_drawing(monkeypatch):
    """Count every picture rendered (``Canvas.png``) and every frame drawn (a full draw)."""
    import widgets._render as render

    counts = {"png": 0, "frame": 0}
    png, prepare = render.Canvas.png, render.Canvas._paste_background

    def counted_png(canvas):
        counts["png"] += 1
        return png(canvas)

    def counted_frame(canvas, layout):
        counts["frame"] += layout not in canvas.backgrounds
        return prepare(canvas, layout)

    monkeypatch.setattr(render.Canvas, "png", counted_png)
    monkeypatch.setattr(render.Canvas, "_paste_background", counted_frame)
    return counts


def through_one_step(view):
    for _ in STAGES:
        view.next_button.click()
    return view


INPUTS = [("parameter", "0.bias"), ("state_key", "exp_avg_sq"), ("optimizer", "AdamW")]


def test_the_dropdowns_show_pictures_rendered_ahead_without_drawing(monkeypatch):
    """After step() every dropdown changes the picture. While the controls rest, the view
    renders each dropdown's next choice (parameter, Adam's state, optimizer); the input
    then sends that picture without drawing anything (nor the unchanged curves), and it is
    the picture a fresh stepper draws for the same inputs."""
    counts = count_drawing(monkeypatch)

    async def inputs_after_rests():
        view = through_one_step(view_of(optimizer="Adam", lr=0.01))
        shown = []
        for control, value in INPUTS:
            await rested(view)
            before = dict(counts)
            getattr(view, control).value = value
            shown.append((bytes(view.image.value), counts == before))
        return shown

    shown = asyncio.run(inputs_after_rests())
    fresh = through_one_step(view_of(optimizer="Adam", lr=0.01))  # no event loop: drawn now
    for (control, value), (picture, without_drawing) in zip(INPUTS, shown):
        getattr(fresh, control).value = value
        assert without_drawing, control
        assert picture == png_bytes(fresh.image), control
    assert fresh.right_panel.artists["text"].get_text() == (
        "a new AdamW: its state is\nempty until its first step()")


def test_rendering_ahead_changes_no_state_of_the_model_the_optimizer_or_the_rngs():
    """What the view renders ahead only draws: parameters, .grad, the optimizer's state,
    the batch order's generator and the library's RNG are as they were, and the next
    stages train exactly as a stepper that rendered nothing ahead."""
    def snapshot(view):
        m = view.model
        return ({n: p.detach().numpy().copy() for n, p in m.model.named_parameters()},
                {n: p.grad.numpy().copy() for n, p in m.model.named_parameters()},
                [{k: np.array(v).copy() for k, v in m.optimizer.state[p].items()}
                 for p in m.model.parameters()],
                str(m.rng.bit_generator.state), et.get_rng_state().numpy().copy(),
                (m.stages_run, m.steps, m.iteration, m._cursor))

    def same(a, b):
        for x, y in zip(a, b):
            if isinstance(x, dict):
                assert x.keys() == y.keys() and all(np.array_equal(x[k], y[k]) for k in x)
            elif isinstance(x, list):
                same(x, y)
            else:
                assert np.array_equal(x, y)

    async def rest_and_snapshot():
        view = through_one_step(view_of(optimizer="Adam", lr=0.01))
        before = snapshot(view)
        await rested(view)  # the dropdowns' neighbours and the next stage's frame
        # the picture shown, and the next and previous parameter, state and optimizer
        assert sum(key[0] == view.model.stages_run for key in view.rendered) == 7
        return view, before, snapshot(view)

    view, before, after = asyncio.run(rest_and_snapshot())
    same(before, after)
    twin = through_one_step(view_of(optimizer="Adam", lr=0.01))
    for _ in STAGES:
        view.next_button.click()
        twin.next_button.click()
        assert png_bytes(view.image) == png_bytes(twin.image)
    same(snapshot(view), snapshot(twin))


def frozen_first_layer(view):
    view.model.model[0].requires_grad_(False)
    return view


@pytest.mark.parametrize("frozen", [False, True])
def test_the_next_stage_frame_is_prepared_ahead(monkeypatch, frozen):
    """A parameter of another shape (a bias: bars) chosen after step(): backward will show
    its .grad beside its values, a frame not drawn yet (a frozen one's .grad: a note, as
    lesson 11's frozen body). While the controls rest after the loss, that frame is
    rendered; the click on "next stage" then draws no frame, and its picture is the one a
    fresh stepper draws."""
    counts = count_drawing(monkeypatch)
    made = (lambda: frozen_first_layer(view_of(optimizer="SGD", lr=0.1))) if frozen else (
        lambda: view_of(optimizer="SGD", lr=0.1))

    async def to_backward():
        view = through_one_step(made())
        view.parameter.value = "0.bias"
        for _ in range(3):  # zero_grad, forward, loss
            view.next_button.click()
        await rested(view)
        frames = counts["frame"]
        view.next_button.click()  # backward
        return view, counts["frame"] - frames

    view, frames_drawn = asyncio.run(to_backward())
    assert view.model.last.stage == "backward" and frames_drawn == 0
    fresh = through_one_step(made())
    fresh.parameter.value = "0.bias"
    for _ in range(4):
        fresh.next_button.click()
    assert png_bytes(view.image) == png_bytes(fresh.image)
    assert view.left_title.value == fresh.left_title.value
    assert ("0.bias.grad" in fresh.left_title.value) != frozen


def test_a_kept_picture_is_drawn_again_when_code_outside_changes_the_tensors():
    """Kept pictures are keyed by the tensors' ``_version``: after an in-place change made
    outside the stepper, the same choice shows the values as they are now."""
    view = view_of(optimizer="SGD", lr=0.1)
    for _ in range(4):  # zero_grad, forward, loss, backward: the right panel shows the values
        view.next_button.click()
    kept = png_bytes(view.image)
    view.parameter.value = "2.weight"
    with et.no_grad():
        view.model.model[0].weight.mul_(-1.0)
    view.parameter.value = "0.weight"
    assert png_bytes(view.image) != kept
    view.parameter.value = "2.weight"
    view.parameter.value = "0.weight"  # unchanged since: the kept picture
    assert len({png_bytes(view.image), kept}) == 2


def test_a_stage_sends_its_pictures_before_its_texts():
    """The pictures go first (a person waits for them), the caption, titles, code and table
    after; the step's curves right after its picture."""
    view = view_of(optimizer="SGD", lr=0.1)
    sent = []
    for name in ("image", "curves_image", "caption", "left_title", "code", "table", "title"):
        getattr(view, name).observe(lambda change, name=name: sent.append(name), names="value")
    for _ in range(2 * len(STAGES)):  # (the first step's loss is one point: no line yet)
        sent.clear()
        view.next_button.click()
    assert sent[:2] == ["image", "curves_image"] and {"caption", "code", "table"} <= set(sent[2:])
    sent.clear()
    view.parameter.value = "2.weight"
    assert sent[0] == "image" and "caption" not in sent[:1]


def test_the_next_zero_grad_picture_is_rendered_ahead_and_drawn_anew_if_a_grad_changed(
        monkeypatch):
    """After step(), the next stage is zero_grad, which shows each .grad it drops: its
    picture is rendered ahead (nothing runs) and the click draws nothing. If code outside
    the stepper changes a .grad in place meanwhile, the picture is drawn anew from it."""
    counts = count_drawing(monkeypatch)

    async def to_zero_grad(change_grad):
        view = through_one_step(view_of(optimizer="SGD", lr=0.1))
        await rested(view)
        if change_grad:
            with et.no_grad():
                view.model.model[0].weight.grad.mul_(-2.0)
        drawn = counts["png"]
        view.next_button.click()
        return view, counts["png"] - drawn

    for change_grad in (False, True):
        view, drawn = asyncio.run(to_zero_grad(change_grad))
        assert view.model.last.stage == "zero_grad" and drawn == int(change_grad)
        fresh = through_one_step(view_of(optimizer="SGD", lr=0.1))
        if change_grad:
            with et.no_grad():
                fresh.model.model[0].weight.grad.mul_(-2.0)
        fresh.next_button.click()
        assert png_bytes(view.image) == png_bytes(fresh.image)
        assert view.left_title.value == fresh.left_title.value


def test_a_run_forgets_what_waited_to_be_rendered_ahead():
    """"run N steps" trains: the pictures waiting to be rendered ahead (of the stage it
    leaves) are forgotten at the click, and the run's end schedules the new stage's."""
    async def run_after_a_step():
        view = through_one_step(view_of(optimizer="SGD", lr=0.1))  # in a loop: tasks wait
        waiting = len(view.ahead.pending)
        task = view.start_run(3)
        forgotten = not view.ahead.pending
        await task
        return waiting, forgotten, len(view.ahead.pending)

    waiting, forgotten, after = asyncio.run(run_after_a_step())
    assert waiting >= 4 and forgotten and after >= 4


# -- "run N steps" as a person sees it: a picture at least every 250 ms (issue 25) ------------
def fake_clock(monkeypatch, view, iteration_s):
    """The view's run on a fake clock: an iteration takes ``iteration_s``, a rest the seconds
    it asks for; returns the clock (a one-element list, seconds)."""
    import widgets.training_stepper_view as view_module

    now = [0.0]

    async def rest(seconds):
        now[0] += seconds
        await asyncio.sleep(0)

    iterate = view.model.finish_iteration

    def timed_iteration():
        now[0] += iteration_s
        return iterate()

    monkeypatch.setattr(view_module, "clock", lambda: now[0])
    monkeypatch.setattr(view_module, "sleep", rest)
    monkeypatch.setattr(view.model, "finish_iteration", timed_iteration)
    return now


@pytest.mark.parametrize("iteration_s", [0.002, 0.005, 0.011])
def test_a_run_sends_the_curves_about_every_redraw_s_on_its_clock(monkeypatch, iteration_s):
    """On a fake clock, the pictures of a run leave after the chunk that would otherwise end
    more than ``REDRAW_S`` after the last one: never more than ``REDRAW_S`` apart (the chunks
    take alike here), never less than ``REDRAW_S`` minus a chunk and its rest; each after a
    whole chunk (the held-out set was just evaluated), the first after the first step."""
    from widgets.training_stepper_view import CHUNK, GAP_S, REDRAW_S

    view = view_of(optimizer="SGD", lr=0.1)
    now = fake_clock(monkeypatch, view, iteration_s)
    sent = []
    view.curves_image.observe(lambda change: sent.append((now[0], view.model.steps)),
                              names="value")

    async def click_run():
        await view.start_run(200)

    asyncio.run(click_run())
    during = sent[:-1]  # the last: the run's end (_draw_all)
    gaps = [b - a for (a, _), (b, _) in zip(during, during[1:])]
    longest_chunk = CHUNK * iteration_s + GAP_S
    assert len(gaps) >= 3 and max(gaps) <= REDRAW_S + 1e-9
    assert min(gaps) >= REDRAW_S - longest_chunk - 1e-9
    assert during[0][1] == 1 and all((steps - 1) % CHUNK == 0 for _, steps in during)
    assert sent[-1][1] == 200 and view.progress.value == 200


def test_a_run_draws_no_frame_of_the_curves_and_ends_on_the_picture_a_fresh_one_draws(
        monkeypatch):
    """The curves' x axis reaches the run's last step from its first picture, and that frame
    is rendered ahead while the controls rest: the run's pictures draw no frame (each new
    range cost ~100 ms of text layout during the run). The last picture is the one a new
    CurvesPicture draws from the same history."""
    import widgets._render as render
    from widgets.training_stepper_view import CurvesPicture

    frames = []
    paste = render.Canvas._paste_background

    def counted(canvas, layout):
        if isinstance(canvas.panels[0], CurvesPicture) and layout not in canvas.backgrounds:
            frames.append(layout)
        return paste(canvas, layout)

    monkeypatch.setattr(render.Canvas, "_paste_background", counted)
    view = view_of(optimizer="SGD", lr=0.1)
    view.steps.value = 40  # the x axis grew 16 → 32 → 64 during such a run
    assert len(frames) == 1  # built: the frame of 16 steps
    frames.clear()

    async def rest_then_run():
        view._draw_all()  # in the loop: it renders ahead
        await rested(view)
        rested_frames = len(frames)
        await view.start_run(40)
        return rested_frames

    rested_frames = asyncio.run(rest_then_run())
    assert rested_frames == 1 and [limits[0] for (limits,) in frames] == [64.0]
    fresh = CurvesPicture().png(view.model.history, view.model.evaluations)
    assert png_bytes(view.curves_image) == fresh


def test_after_a_run_the_next_runs_frame_is_rendered_ahead_first():
    """A person who ran N steps is likely to run N more: the end of a run schedules the
    frame of the next run first (a frame is the costliest task: a click arriving while it
    renders waits); after a stage it comes after the stage's own pictures."""
    view = view_of(optimizer="SGD", lr=0.1)
    scheduled = []
    view.ahead.schedule = lambda tasks: scheduled.append(list(tasks))

    async def run_then_stage():
        await view.start_run(3)
        after_run = scheduled[-1]
        view.next_button.click()
        return after_run, scheduled[-1]

    after_run, after_stage = asyncio.run(run_then_stage())
    assert after_run[0] == view._prepare_run_frame
    assert view._prepare_run_frame in after_stage[1:]
