"""Cheap checks that the packaging, the developer script and CI agree.

- environment.yml (conda/Binder) lists the same dependencies as pyproject.toml
  (runtime + [widgets] + [lab] + [test]), with the same version specifiers;
- torch is pinned exactly; the engine depends on NumPy and ml_dtypes (bfloat16) only;
- .ci/run calls the README's test command; the README shows both commands;
- the nbval sanitize file masks addresses and timings and nothing else.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    tomllib = pytest.importorskip("tomli")

yaml = pytest.importorskip("yaml", reason="PyYAML is in the [test] extra")
from packaging.requirements import Requirement  # noqa: E402  (pytest depends on packaging)
from packaging.utils import canonicalize_name  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
ENV_GROUPS = ("widgets", "lab", "test", "class")  # extras that environment.yml must contain
TORCH_PIN = "torch==2.13.0"


# --- helpers ------------------------------------------------------------------------
def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def environment() -> dict:
    return yaml.safe_load((ROOT / "environment.yml").read_text())


def normalise(req: str) -> tuple[str, str]:
    """'Matplotlib >= 3.7' -> ('matplotlib', '>=3.7'): canonical name, sorted specifiers."""
    r = Requirement(req)
    spec = ",".join(sorted(str(s) for s in r.specifier))
    return canonicalize_name(r.name), spec


def requirement_map(reqs: list[str], where: str) -> dict[str, str]:
    """name -> specifier; the same package must not carry two different specifiers."""
    out: dict[str, str] = {}
    for req in reqs:
        name, spec = normalise(req)
        if name in out and out[name] != spec:
            raise AssertionError(
                f"{where}: {name} listed with two specifiers: {out[name]!r} and {spec!r}"
            )
        out[name] = spec
    return out


def pyproject_requirements(groups=ENV_GROUPS) -> list[str]:
    project = pyproject()["project"]
    reqs = list(project["dependencies"])
    for group in groups:
        reqs += project["optional-dependencies"][group]
    return reqs


def environment_pip_requirements() -> list[str]:
    deps = environment()["dependencies"]
    pip_sections = [d["pip"] for d in deps if isinstance(d, dict) and "pip" in d]
    assert len(pip_sections) == 1, "environment.yml needs exactly one `pip:` section"
    # `-e .` installs this repository itself: not a dependency to compare
    return [str(r) for r in pip_sections[0] if not str(r).startswith("-")]


def compare(a: dict[str, str], b: dict[str, str]) -> list[str]:
    problems = []
    for name in sorted(a.keys() | b.keys()):
        if name not in b:
            problems.append(f"{name}{a[name]} is in pyproject.toml but not in environment.yml")
        elif name not in a:
            problems.append(f"{name}{b[name]} is in environment.yml but not in pyproject.toml")
        elif a[name] != b[name]:
            problems.append(f"{name}: pyproject.toml says {a[name]!r}, environment.yml {b[name]!r}")
    return problems


# --- the sync test and its own check ----------------------------------------------------
def test_environment_yml_lists_the_same_dependencies_as_pyproject():
    want = requirement_map(pyproject_requirements(), "pyproject.toml")
    have = requirement_map(environment_pip_requirements(), "environment.yml")
    assert compare(want, have) == []


def test_sync_check_detects_drift():
    """The comparison must be able to fail: a missing package, an extra one, a changed pin."""
    base = {"numpy": ">=1.24", "matplotlib": ">=3.7"}
    assert compare(base, dict(base)) == []
    assert compare(base, {"numpy": ">=1.24"})  # missing
    assert compare(base, {**base, "scipy": ""})  # extra
    assert compare(base, {**base, "numpy": ">=1.26"})  # different specifier
    # normalisation: case, separators and spaces do not count as drift
    assert normalise("Matplotlib >= 3.7") == normalise("matplotlib>=3.7")
    assert normalise("PyYAML>=6") == normalise("pyyaml >=6")
    assert normalise("numpy<3,>=1.24") == normalise("numpy>=1.24,<3")
    with pytest.raises(AssertionError, match="two specifiers"):
        requirement_map(["numpy>=1.24", "NumPy>=2"], "x")


def test_environment_yml_basics():
    env = environment()
    assert env["name"] == "edutorch"
    conda = [d for d in env["dependencies"] if isinstance(d, str)]
    assert "python=3.11" in conda
    assert "pip" in conda
    pip = [str(r) for d in env["dependencies"] if isinstance(d, dict) for r in d.get("pip", [])]
    # the repository is installed from source, never `edutorch` from PyPI
    assert "-e ." in pip
    assert not any(canonicalize_name(Requirement(r).name) == "edutorch"
                   for r in pip if not r.startswith("-"))


# --- pyproject.toml ------------------------------------------------------------------------
def test_project_metadata():
    project = pyproject()["project"]
    assert project["name"] == "edutorch"
    assert project["version"] == "0.1.0"
    assert project["requires-python"] == ">=3.10"
    # the engine needs NumPy, and ml_dtypes for bfloat16
    assert [normalise(r)[0] for r in project["dependencies"]] == ["numpy", "ml-dtypes"]
    extras = project["optional-dependencies"]
    assert set(extras) >= {"widgets", "lab", "test", "gpu", "parity", "class"}


def test_torch_is_pinned_exactly():
    """An unpinned torch pulls gigabytes of CUDA packages."""
    project = pyproject()["project"]
    all_reqs = list(project["dependencies"])
    for reqs in project["optional-dependencies"].values():
        all_reqs += reqs
    torch_reqs = [r for r in all_reqs if normalise(r)[0] == "torch"]
    assert torch_reqs, "the parity extra must list torch"
    for r in torch_reqs:
        assert normalise(r) == normalise(TORCH_PIN), f"torch must be pinned: {r!r}"


def test_extras_are_supersets_where_they_must_be():
    """[lab] and [test] bring the widget dependencies; [test] also brings JupyterLab."""
    extras = {k: {normalise(r) for r in v}
              for k, v in pyproject()["project"]["optional-dependencies"].items()}
    assert extras["widgets"] <= extras["lab"]
    assert extras["lab"] <= extras["test"]
    names = {n for n, _ in extras["test"]}
    assert {"pytest", "nbval", "hypothesis", "ipykernel", "playwright"} <= names


def test_packages_and_package_data():
    tool = pyproject()["tool"]
    include = tool["setuptools"]["packages"]["find"]["include"]
    assert "edutorch*" in include and "widgets*" in include
    data = tool["setuptools"]["package-data"]
    assert any("*.npz" in pattern for patterns in data.values() for pattern in patterns)


def test_pytest_config():
    ini = pyproject()["tool"]["pytest"]["ini_options"]
    assert "tests" in ini["testpaths"] and "lessons" in ini["testpaths"]
    declared = {m.split(":")[0].strip() for m in ini["markers"]}
    assert {"browser", "parity", "slow"} <= declared


# --- dev, .ci/run, README ------------------------------------------------------------------
def test_dev_script_is_executable_bash():
    dev = ROOT / "dev"
    assert os.access(dev, os.X_OK), "./dev must be executable"
    subprocess.run(["bash", "-n", str(dev)], check=True)
    text = dev.read_text()
    for needle in ("--nbval", "--nbval-current-env", "nbval_sanitize.cfg",
                   "MPLBACKEND=Agg", "OMP_NUM_THREADS=1", "JUPYTER_CONFIG_DIR",
                   "jupyter\" lab", "-e \".[$extras]\""):
        assert needle in text, f"dev script lost {needle!r}"


def test_dev_pins_openblas_haswell_kernel_on_avx2_cpus():
    """Stored notebook outputs were computed with OpenBLAS's AVX2 (Haswell) matmul kernel; on an
    AVX-512 CPU its own kernels sum in another order and a lesson that trains prints other digits."""
    script = ('source <(sed -n "/^same_matmul_kernel()/,/^}/p" dev); '
              'unset OPENBLAS_CORETYPE; same_matmul_kernel; echo "${OPENBLAS_CORETYPE:-unset}"')
    out = subprocess.run(["bash", "-c", script], cwd=ROOT, capture_output=True, text=True, check=True)
    try:
        avx2 = "avx2" in Path("/proc/cpuinfo").read_text().split()
    except OSError:
        avx2 = False
    assert out.stdout.strip() == ("Haswell" if avx2 else "unset")
    text = (ROOT / "dev").read_text()
    for command in ("test_env()", "cmd_lab()"):  # test/execute/release/grade use test_env
        body = text.split(command, 1)[1].split("\n}\n", 1)[0]
        assert "same_matmul_kernel" in body, f"{command} does not pin the matmul kernel"


def test_dev_help_runs():
    out = subprocess.run([str(ROOT / "dev"), "help"], capture_output=True, text=True, check=True)
    assert "./dev lab" in out.stdout and "./dev test" in out.stdout


def test_ci_run_calls_the_readme_test_command():
    ci = ROOT / ".ci" / "run"
    assert os.access(ci, os.X_OK), ".ci/run must be executable"
    subprocess.run(["bash", "-n", str(ci)], check=True)
    text = ci.read_text()
    assert "set -euo pipefail" in text
    assert re.search(r"^exec \./dev test\b|^\./dev test\b", text, re.M)
    assert TORCH_PIN in text
    # torch is installed before the tests run
    assert text.index(TORCH_PIN) < text.index("./dev test </dev/null")
    assert "apt-get install -y" in text and "chromium" in text
    code = "\n".join(l for l in text.splitlines() if not l.lstrip().startswith("#"))
    assert "playwright install" not in code  # Debian's chromium is used, not a download


def test_readme_shows_the_two_commands_and_the_pypi_warning():
    readme = (ROOT / "README.md").read_text()
    fences = re.findall(r"^```(\w*)\n(.*?)^```", readme, re.S | re.M)
    shell = [body for lang, body in fences if lang in ("bash", "sh", "console", "")]
    commands = [line.split("#")[0].strip() for b in shell for line in b.splitlines()]
    assert "./dev lab" in commands
    assert "./dev test" in commands
    assert "import edutorch as torch" in readme
    assert re.search(r"PyPI.*unrelated", readme, re.S)
    assert "pip install -e ." in readme
    assert ".[gpu]" in readme and 'device="cuda"' in readme
    assert "--nbval-sanitize-with .ci/nbval_sanitize.cfg" in readme
    assert re.search(r"!\[[^\]]*\]\([^)]+\.png\)|<img src=\"[^\"]+\.png\"", readme)  # a screenshot
    for n in range(1, 13):
        assert re.search(rf"^\| {n:02d} \|", readme, re.M), f"lesson {n:02d} missing"


def test_gitignore_covers_generated_files():
    lines = set((ROOT / ".gitignore").read_text().split())
    for pattern in (".venv/", "__pycache__/", "*.egg-info/", ".pytest_cache/",
                    ".ipynb_checkpoints/", "build/"):
        assert pattern in lines


# --- nbval sanitize file -------------------------------------------------------------------
def sanitize_patterns() -> list[tuple[str, str]]:
    """Parse .ci/nbval_sanitize.cfg exactly as nbval does."""
    text = (ROOT / ".ci" / "nbval_sanitize.cfg").read_text()
    return re.findall("^regex: (.*)$\n^replace: (.*)$", text, flags=re.M)


def sanitize(s: str) -> str:
    for regex, replace in sanitize_patterns():
        s = re.sub(regex, replace, s)
    return s


def test_sanitize_file_masks_addresses_and_timings():
    patterns = sanitize_patterns()
    assert patterns, "no regex/replace pairs found"
    for regex, replace in patterns:
        re.compile(regex)
        assert regex == regex.strip() and replace == replace.strip()
    assert sanitize("<Foo object at 0x7f3a2b1c>") == sanitize("<Foo object at 0x55d0e1f0a0>")
    assert sanitize("step took 12.3 ms") == sanitize("step took 0.9 ms")
    assert sanitize("trained in 1.23 s") == sanitize("trained in 14 s")
    assert sanitize("1.2 ms ± 30 µs per loop (mean ± std. dev. of 7 runs, 1,000 loops each)") == \
        sanitize("950 µs ± 4.1 µs per loop (mean ± std. dev. of 7 runs, 100 loops each)")


def test_sanitize_file_keeps_real_results():
    """Numbers that are the lesson must still be compared."""
    for text in ("tensor([1., 2., 3.])", "loss 0.6931", "accuracy: 0.97",
                 "sparsity 50.0%", "Linear(in_features=3, out_features=2, bias=True)",
                 "torch.Size([2, 3])", "10 steps", "3 samples"):
        assert sanitize(text) == text
