"""Lesson 12's checks (beyond the basics): right answers pass, typical mistakes get their hint,
with edutorch objects and with real PyTorch objects."""
import pytest

import checks
from check_helpers import assert_hint, assert_ok
import edutorch as et


def notebook_function(source, lib):
    """The function ``source`` defines, as a notebook that imported ``lib`` as ``torch`` defines it."""
    namespace = {"torch": lib, "nn": lib.nn, "F": lib.nn.functional}
    if lib is et:
        from edutorch.utils.checkpoint import checkpoint_sequential
    else:
        from torch.utils.checkpoint import checkpoint_sequential
    namespace["checkpoint_sequential"] = checkpoint_sequential
    exec(source, namespace)
    return namespace["answer"]


TWO_CELLS = """
def answer(xs, cell_a, cell_b):
    h = torch.zeros(cell_a.out_features)
    for x_t in xs:
        cell = {choice}
        h = torch.tanh(cell(torch.cat([{x_t}, h])))
    return h
"""


def two_cells(lib, choice="cell_a if x_t.sum() > 0 else cell_b", x_t="x_t"):
    return notebook_function(TWO_CELLS.format(choice=choice, x_t=x_t), lib)


def test_12_1_right_answer_passes(lib):
    assert_ok(checks.exercise_12_1.check(two_cells(lib)))


def test_12_1_mistakes_get_hints(lib):
    assert_hint(checks.exercise_12_1.check(two_cells(lib, "cell_b if x_t.sum() > 0 else cell_a")), "swapped")
    assert_hint(checks.exercise_12_1.check(two_cells(lib, "cell_a")), "same cell")
    assert_hint(checks.exercise_12_1.check(two_cells(lib, x_t="x_t * 2")), "h differs")
    detached = notebook_function(TWO_CELLS.format(choice="cell_a if x_t.sum() > 0 else cell_b",
                                                  x_t="x_t").replace("return h", "return h.detach()"), lib)
    assert_hint(checks.exercise_12_1.check(detached), "no graph")
    assert_hint(checks.exercise_12_1.check("run"), "define the function")


GELU = """
def answer(gm):
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target is torch.relu:
            node.target = F.gelu
    {recompile}
    return {result}
"""


def test_12_2_right_answer_passes(lib):
    assert_ok(checks.exercise_12_2.check(notebook_function(
        GELU.format(recompile="gm.recompile()", result="gm"), lib)))


def test_12_2_mistakes_get_hints(lib):
    assert_hint(checks.exercise_12_2.check(notebook_function(
        GELU.format(recompile="pass", result="gm"), lib)), "recompile")
    assert_hint(checks.exercise_12_2.check(notebook_function(
        GELU.format(recompile="gm.recompile()", result="None"), lib)), "return gm")
    untouched = "def answer(gm):\n    return gm\n"
    assert_hint(checks.exercise_12_2.check(notebook_function(untouched, lib)), "torch.relu")
    everything = ("def answer(gm):\n    for node in gm.graph.nodes:\n"
                  "        if node.op == 'call_function' and node.target is torch.relu:\n"
                  "            node.target = F.gelu\n"
                  "        if node.op == 'call_method' and node.target == 'relu':\n"
                  "            node.op, node.target = 'call_function', F.gelu\n"
                  "    gm.recompile()\n    return gm\n")
    assert_hint(checks.exercise_12_2.check(notebook_function(everything, lib)), "call_method")


def test_12_3_right_answer_and_mistakes(lib):
    right = "def answer(model, x, segments):\n    return checkpoint_sequential(model, segments, x, use_reentrant=False)\n"
    assert_ok(checks.exercise_12_3.check(notebook_function(right, lib)))
    implicit = "def answer(model, x, segments):\n    return checkpoint_sequential(model, segments, x)\n"
    assert_hint(checks.exercise_12_3.check(notebook_function(implicit, lib)), "use_reentrant=False")
    plain = "def answer(model, x, segments):\n    return model(x)\n"
    assert_hint(checks.exercise_12_3.check(notebook_function(plain, lib)), "nothing was checkpointed")
    doubled = "def answer(model, x, segments):\n    return checkpoint_sequential(model, segments, x * 2, use_reentrant=False)\n"
    assert_hint(checks.exercise_12_3.check(notebook_function(doubled, lib)), "output differs")


RIGHT_DTYPES = {"a @ b": et.bfloat16, "(a @ b).relu()": et.bfloat16, "a.relu()": et.float32,
                "d @ d": et.float64, "F.mse_loss(a @ b, b)": et.float32}


def test_12_4_right_dtypes_pass_as_edutorch_or_torch_dtypes(lib):
    assert_ok(checks.exercise_12_4.check(dict(RIGHT_DTYPES)))
    assert_ok(checks.exercise_12_4.check({k: getattr(lib, str(v).split(".")[1]) for k, v in RIGHT_DTYPES.items()}))


def test_12_4_the_policy_is_torchs(lib):
    assert checks.lesson12._autocast_truth(lib) == {k: str(v) for k, v in RIGHT_DTYPES.items()}


@pytest.mark.parametrize("key, wrong, words", [
    ("a @ b", et.float32, ["low dtype"]),
    ("(a @ b).relu()", et.float32, ["bfloat16 product"]),
    ("a.relu()", et.bfloat16, ["float32 here"]),
    ("d @ d", et.bfloat16, ["never cast"]),
    ("F.mse_loss(a @ b, b)", et.bfloat16, ["losses run in float32"]),
])
def test_12_4_wrong_dtypes_name_the_rule(key, wrong, words):
    assert_hint(checks.exercise_12_4.check(dict(RIGHT_DTYPES, **{key: wrong})), *words)
    assert_hint(checks.exercise_12_4.check(dict.fromkeys(RIGHT_DTYPES)), "is None")


STEP = """
def answer(model, optimizer, scaler, x, y):
    optimizer.zero_grad()
    with torch.autocast("cpu", dtype=torch.float16):
        loss = F.mse_loss(model(x), y)
    {backward}
    {step}
    {update}
    return {result}
"""


def step(lib, backward="scaler.scale(loss).backward()", step="scaler.step(optimizer)",
         update="scaler.update()", result="loss"):
    return notebook_function(STEP.format(backward=backward, step=step, update=update, result=result), lib)


def test_12_5_right_answer_passes(lib):
    assert_ok(checks.exercise_12_5.check(step(lib)))


def test_12_5_mistakes_get_hints(lib):
    assert_hint(checks.exercise_12_5.check(step(lib, update="pass")), "scaler.update()")
    assert_hint(checks.exercise_12_5.check(step(lib, backward="loss.backward()")), "scaler.scale(loss)")
    assert_hint(checks.exercise_12_5.check(step(lib, step="optimizer.step()")), "scaler.step(optimizer)")
    assert_hint(checks.exercise_12_5.check(step(lib, result="None")), "return the loss")
