"""The GitHub Actions workflow (.github/workflows/test.yml) parses and runs the README's test command."""
import pathlib
import re

import pytest

yaml = pytest.importorskip("yaml", reason="pyyaml not installed (pip install -e .[test])")

ROOT = pathlib.Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / ".github" / "workflows" / "test.yml"
CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def readme_test_command():
    """The test command the README tells you to run (`./dev test`)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    fences = re.findall(r"^```(\w*)\n(.*?)^```", readme, re.S | re.M)
    commands = [line.split("#")[0].strip() for lang, body in fences if lang in ("bash", "sh", "")
                for line in body.splitlines()]
    return next(c for c in commands if c.startswith("./dev test"))


def steps():
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    assert workflow.get("on", workflow.get(True)), "the workflow needs triggers"  # YAML reads `on` as True
    (job,) = workflow["jobs"].values()
    assert job["runs-on"].startswith("ubuntu")
    return job["steps"]


def run_lines(step):
    text = step.get("run", "").replace("\\\n", " ")
    return [" ".join(line.split()) for line in text.splitlines() if line.strip()]


def test_workflow_parses_and_its_last_step_is_the_readme_command():
    all_steps = steps()
    assert any(s.get("uses", "").startswith("actions/checkout@") for s in all_steps)
    python = [s for s in all_steps if s.get("uses", "").startswith("actions/setup-python@")]
    assert python and str(python[0]["with"]["python-version"]).startswith("3.")
    assert run_lines(all_steps[-1]) == [readme_test_command()] == ["./dev test"]


def test_torch_comes_from_pytorchs_cpu_index_pinned_before_the_tests():
    lines = [(i, line) for i, s in enumerate(steps()) for line in run_lines(s)]
    torch = [(i, line) for i, line in lines if "torch==2.13.0" in line]
    assert torch, "the parity tests need torch==2.13.0"
    for i, line in torch:
        assert f"--index-url {CPU_INDEX}" in line, line
    tests = next(i for i, line in lines if line == "./dev test")
    assert all(i < tests for i, _ in torch)


def test_a_real_chromium_is_installed_not_the_snap_stub():
    lines = [line for s in steps() for line in run_lines(s)]
    assert any(re.search(r"-m playwright install --with-deps chromium$", line) for line in lines)
    assert not any(re.search(r"apt(-get)? install .*\bchromium\b", line) for line in lines)


def test_workflow_check_can_fail(tmp_path):
    """The checks above must reject a workflow that installs the CUDA torch or skips the tests."""
    bad = tmp_path / "test.yml"
    bad.write_text("on: [push]\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n"
                   "      - uses: actions/checkout@v4\n      - uses: actions/setup-python@v5\n"
                   "        with: {python-version: '3.11'}\n"
                   "      - run: pip install torch==2.13.0\n      - run: pytest\n")
    globals()["WORKFLOW"], saved = bad, WORKFLOW
    try:
        with pytest.raises(AssertionError):
            test_workflow_parses_and_its_last_step_is_the_readme_command()
        with pytest.raises(AssertionError):
            test_torch_comes_from_pytorchs_cpu_index_pinned_before_the_tests()
    finally:
        globals()["WORKFLOW"] = saved


def test_pip_the_venv_and_chromium_are_cached_and_nothing_installs_twice():
    all_steps = steps()
    python = next(s for s in all_steps if s.get("uses", "").startswith("actions/setup-python@"))
    assert python["with"]["cache"] == "pip" and "pyproject.toml" in python["with"]["cache-dependency-path"]
    cached = {s["with"]["path"]: s for s in all_steps if s.get("uses", "").startswith("actions/cache@")}
    assert set(cached) == {".venv", "~/.cache/ms-playwright"}
    for step in cached.values():
        assert "hashFiles('pyproject.toml'" in step["with"]["key"], "a cache must follow the dependencies"
    assert "python-version" in cached[".venv"]["with"]["key"], "a venv links to its Python"
    torch = next(s for s in all_steps if any("torch==2.13.0" in line for line in run_lines(s)))
    assert torch.get("if") == f"steps.{cached['.venv']['id']}.outputs.cache-hit != 'true'"
    lines = [line for s in all_steps for line in run_lines(s)]
    installs = [line for line in lines if line.startswith("./dev install")]
    assert installs == ["./dev install test hub"], "the test extra includes class, hub adds JupyterHub: one install"


def test_dev_counts_an_extra_installed_when_an_install_covers_it(tmp_path):
    """`./dev install test` then `./dev lab` (lab, class) or `./dev release` (class): no second pip run."""
    import subprocess
    import sys

    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "python").symlink_to(sys.executable)
    functions = ("install_fingerprint", "extra_installed", "covered_extras")
    script = "".join(f'source <(sed -n "/^{f}()/,/^}}/p" dev); ' for f in functions)
    script += (f'VENV={tmp_path}; VPY=$VENV/bin/python; want=$(install_fingerprint); '
               'echo "$want" > $VENV/.edutorch-installed-test; '
               'for e in test lab class widgets gpu parity; do extra_installed $e "$want" && echo $e; done; '
               'echo stale > $VENV/.edutorch-installed-test; extra_installed lab "$want" || echo none')
    out = subprocess.run(["bash", "-c", script], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["test", "lab", "class", "widgets", "none"], out.stderr
