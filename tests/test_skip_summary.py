"""Skipped tests are summarised one line per reason (tests/conftest.py), not one line per test."""
import pathlib
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]

SAMPLE = '''
import pytest

@pytest.mark.parametrize("i", range(30))
def test_parity(i):
    pytest.skip("real PyTorch not installed: parity test skipped (pip install torch==2.13.0)")

def test_other():
    pytest.skip("nbgrader not installed (pip install -e .[class])")

def test_runs():
    pass
'''


def run_pytest(tmp_path, *args):
    shutil.copy(ROOT / "tests" / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "test_sample.py").write_text(SAMPLE)
    out = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-c",
                          str(ROOT / "pyproject.toml"), "--rootdir", str(tmp_path),
                          str(tmp_path / "test_sample.py"), *args],
                         capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout


def test_skips_are_one_line_per_reason(tmp_path):
    out = run_pytest(tmp_path)
    assert "SKIPPED [" not in out
    assert "  30 skipped: real PyTorch not installed: parity test skipped (pip install torch==2.13.0)" in out
    assert "   1 skipped: nbgrader not installed (pip install -e .[class])" in out

