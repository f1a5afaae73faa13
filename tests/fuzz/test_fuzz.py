"""Differential fuzzing: random programs must run alike on edutorch and real PyTorch.

Each case is a random program (``fuzz_program.generate(seed)``: leaf tensors,
ops, views, in-place writes, ``nn`` layers, a scalar loss and ``backward``)
run on both libraries.  Either both raise the same built-in exception type at
the same line, or every value, ``requires_grad``, ``is_leaf`` and ``.grad``
agrees in float64 (rtol 1e-7).  A disagreement is shrunk to a few lines and
printed as Python that runs on either library.  Known disagreements (being
fixed, see ``fuzz_known.KNOWN``) are counted, not failed.

CI runs a fixed budget of seeded cases (the same programs every run);
``./dev fuzz --minutes N`` runs as long as asked (docs/fuzzing.md).
Environment: EDUTORCH_FUZZ_EXAMPLES, EDUTORCH_FUZZ_SECONDS, EDUTORCH_FUZZ_SEED.
"""
import collections
import os
import time
from dataclasses import dataclass, field

import pytest

torch = pytest.importorskip(
    "torch", reason="real PyTorch not installed: differential fuzz tests skipped (pip install torch==2.13.0)")

import edutorch  # noqa: E402
import fuzz_program as fp  # noqa: E402
from fuzz_known import KNOWN, known_issue  # noqa: E402

pytestmark = pytest.mark.parity

# Cases per CI run (about 20 s together on an idle 2-core machine); the long mode replaces them.
CI_CASES = {"backward": 2000, "double": 500, "forward": 800}
SHARE = {"backward": 0.6, "double": 0.2, "forward": 0.2}  # of a long run's time or examples
OFFSET = {"backward": 0, "double": 500_000_000, "forward": 750_000_000}  # of the case seeds
MAX_REPORTED = 20  # shrunk failures per run (the rest are only counted)


def budget(mode):
    """(cases, seconds) for ``mode`` from the environment; CI's fixed count by default.
    EDUTORCH_FUZZ_MODE (``./dev fuzz --mode``) gives one mode the whole time or examples."""
    share = 1.0 if os.environ.get("EDUTORCH_FUZZ_MODE") == mode else SHARE[mode]
    seconds = os.environ.get("EDUTORCH_FUZZ_SECONDS")
    if seconds:
        return None, float(seconds) * share
    examples = os.environ.get("EDUTORCH_FUZZ_EXAMPLES")
    if examples:
        return max(1, int(int(examples) * share)), None
    return CI_CASES[mode], None


@dataclass
class Campaign:
    ran: int = 0
    invalid: int = 0
    errors_alike: int = 0
    known: collections.Counter = field(default_factory=collections.Counter)
    failures: list = field(default_factory=list)  # (seed, kind, shrunk program, difference lines)
    failing: int = 0
    seconds: float = 0.0
    slowest: tuple = (0.0, None)  # (seconds, seed) of the slowest program

    def report(self, mode):
        lines = [f"{mode}: {self.ran} programs in {self.seconds:.1f} s ({self.ran / max(self.seconds, 1e-9):.0f}/s), "
                 f"{self.errors_alike} raised alike, {self.invalid} refused by guards, "
                 f"{self.failing} new disagreements, {sum(self.known.values())} known; "
                 f"slowest: seed {self.slowest[1]}, {self.slowest[0]:.2f} s"]
        lines += [f"  known {name}: {n}" for name, n in self.known.most_common()]
        for seed, kind, program, diff in self.failures:
            lines += ["", f"--- disagreement ({kind}), seed {seed}, shrunk:", fp.source(program),
                      "--- differences:", *diff[:6]]
        return "\n".join(lines)


def compare(program):
    """(difference lines, PyTorch outcome, edutorch outcome); Invalid for unfair programs."""
    ref = fp.execute(program, torch, check=True)
    got = fp.execute(program, edutorch)
    return fp.differences(ref, got, program), ref, got


def still_fails_like(kind):
    def test(candidate):
        try:
            diff, ref, got = compare(candidate)
        except fp.Invalid:
            return False
        return bool(diff) and fp.kind_of(diff) == kind and known_issue(candidate, ref, got) is None
    return test


def run_campaign(mode, cases, seconds, seed):
    """Generate and compare programs until ``cases`` ran or ``seconds`` passed."""
    result = Campaign()
    start = time.perf_counter()
    seen = set()
    offset = OFFSET[mode]
    i = 0
    while (cases is None or i < cases) and (seconds is None or time.perf_counter() - start < seconds):
        case_seed = seed * 1_000_000_007 + offset + i
        i += 1
        began = time.perf_counter()
        try:
            program = fp.generate(case_seed, torch, double=mode == "double", forward=mode == "forward")
            diff, ref, got = compare(program)
        except fp.Invalid:
            result.invalid += 1
            continue
        result.slowest = max(result.slowest, (time.perf_counter() - began, case_seed))
        result.ran += 1
        if not diff:
            result.errors_alike += ref.error is not None
            continue
        name = known_issue(program, ref, got)
        if name:
            result.known[name] += 1
            continue
        result.failing += 1
        kind = fp.kind_of(diff)
        if len(result.failures) < MAX_REPORTED:
            small = fp.shrink(program, still_fails_like(kind))
            signature = (kind, tuple(sorted({s.op for s in small.steps})))
            if signature not in seen:
                seen.add(signature)
                result.failures.append((case_seed, kind, small, compare(small)[0]))
    result.seconds = time.perf_counter() - start
    return result


@pytest.mark.parametrize("mode", ["backward", "double", "forward"])
def test_random_programs_agree_with_pytorch(mode):
    """``mode`` double: the loss is loss + |grad|^2 with the grads from create_graph=True;
    forward: dual leaves in a dual level, every value's primal and tangent compared, no loss."""
    cases, seconds = budget(mode)
    seed = int(os.environ.get("EDUTORCH_FUZZ_SEED", "0"))
    result = run_campaign(mode, cases, seconds, seed)
    report = result.report(mode)
    print("\n" + report)
    assert result.failing == 0, report


def test_known_issues_still_disagree():
    """Each KNOWN example must still disagree; once fixed, delete its entry in fuzz_known.py."""
    fixed = [name for name, entry in sorted(KNOWN.items()) if not compare(fp.from_source(entry.example))[0]]
    assert not fixed, f"KNOWN {fixed} now agree with PyTorch: delete them in tests/fuzz/fuzz_known.py"


# --- the harness itself -----------------------------------------------------------------
def test_a_wrong_gradient_is_caught_and_shrunk():
    """The comparison sees a changed op, and shrinking keeps only the lines that matter."""
    right = fp.from_source(
        "x = torch.tensor([0.5, -1.5], dtype=torch.float64, requires_grad=True)\n"
        "a = x.exp()\nb = x.sin()\nloss = (a + b).sum()\nloss.backward()")
    wrong = fp.from_source(fp.source(right).split("\n", 2)[2].replace("x.sin()", "x.cos()"))
    ref = fp.execute(right, torch)
    diff = fp.differences(ref, fp.execute(wrong, torch))
    assert diff and "b.values" in diff[0]
    assert fp.differences(ref, fp.execute(right, edutorch)) == []


def test_an_error_of_another_type_is_a_disagreement():
    program = fp.from_source("x = torch.tensor([1., 2.], dtype=torch.float64)\ny = x.view(3)")
    ref = fp.execute(program, torch)
    assert ref.error[1] == "RuntimeError"
    other = fp.Outcome(error=(ref.error[0], "ValueError", "shape"))
    assert fp.differences(ref, other)
    assert fp.differences(ref, ref) == []


def test_shrink_removes_steps_that_do_not_matter():
    program = fp.generate(3, torch)
    last = program.steps[-1]

    def keeps_last(candidate):
        return candidate.steps and candidate.steps[-1] == last

    small = fp.shrink(program, keeps_last)
    assert small.steps[-1] == last
    assert len(small.steps) <= len(program.steps)
    assert all(not keeps_last(fp.without(small, i)) for i in range(len(small.steps)))


def test_forward_mode_draws_every_family_but_the_ops_it_does_not_compare():
    import random

    import fuzz_ops

    r = random.Random(0)
    drawn = {fuzz_ops.choose(r, forward=True).name for _ in range(20000)}
    assert not {name for name in drawn if fuzz_ops.not_in_forward_mode(fuzz_ops.OPS[name])}
    for family, (_, ops) in fuzz_ops.FAMILIES.items():
        assert drawn & {op.name for op in ops}, family
    assert "squeeze_copy" in {fuzz_ops.choose(r).name for _ in range(20000)}  # other modes draw them


def test_a_write_into_self_overlapping_memory_is_seen():
    x = torch.zeros(3, 3, dtype=torch.float64)
    ns = {"torch": torch, "u": x.unfold(0, 2, 1), "s": x[::2], "e": x[0].expand(2, 3)}
    seen = {name: fp.writes_overlapping_memory(fp.Step(op="F.elu_", code="", target=name), ns) for name in "use"}
    assert seen == {"u": True, "s": False, "e": True}
