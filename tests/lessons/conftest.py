"""Make ``lessons/checks.py`` importable as ``checks`` (the notebooks import it that way)."""
import pathlib
import sys

LESSONS = pathlib.Path(__file__).resolve().parents[2] / "lessons"
if str(LESSONS) not in sys.path:
    sys.path.insert(0, str(LESSONS))
