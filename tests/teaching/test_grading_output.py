"""What `./dev grade` shows the teacher and the student (teaching/course.py): feedback pages that
name each exercise and hide the teacher's folders, and kernels started without plain-text TCP."""
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "teaching"))
import course  # noqa: E402  (teaching/course.py)

PAGE = """<li><a href="#ex3_1_check">Test cell</a> (Score: 0.0 / 1.0)</li>
<li><a href="#ex3_12_check">Test cell</a> (Score: 2.0 / 2.0)</li>
<li><a href="#other_id">Test cell</a> (Score: 1.0 / 1.0)</li>
<span class="nbgrader-label">Grade cell: <code>ex3_1_check</code></span>
<span class="ansi-cyan-fg">File </span><span class="ansi-green-fg">{course}/autograded/alice/03-hooks/checks.py:77</span>
see {course}/source
"""


def test_feedback_names_exercises_and_hides_the_teachers_paths(tmp_path):
    course_dir = tmp_path / "my course"
    page = tmp_path / "03-hooks.html"
    page.write_text(PAGE.format(course=course_dir), encoding="utf-8")
    course._polish_feedback(page, course_dir)
    text = page.read_text(encoding="utf-8")
    assert '<a href="#ex3_1_check">Exercise 3.1</a> (Score: 0.0 / 1.0)' in text
    assert '<a href="#ex3_12_check">Exercise 3.12</a>' in text
    assert '<a href="#other_id">Test cell</a>' in text, "a cell that is not an exercise check keeps its label"
    assert "Exercise 3.1: <code>ex3_1_check</code>" in text
    assert '<span class="ansi-green-fg">checks.py:77</span>' in text
    assert str(tmp_path) not in text and "see COURSE/source" in text


def test_grading_kernels_use_transport_encryption(tmp_path):
    pytest.importorskip("nbgrader", reason="nbgrader not installed (pip install -e \".[class]\")")
    if not course._kernel_encryption_configurable():
        pytest.skip("jupyter_client < 8.7: no transport_encryption (kernels warn about TCP)")
    assert course.config(tmp_path).KernelManager.transport_encryption == "auto"
    assert 'c.KernelManager.transport_encryption = "auto"' in course.CONFIG_FILE


def test_feedback_shows_a_widgets_stored_picture_not_a_dead_widget_view(tmp_path):
    pytest.importorskip("nbgrader", reason="nbgrader not installed (pip install -e \".[class]\")")
    priority = list(course.config(tmp_path).DataTypeFilter.display_data_priority)
    assert "application/vnd.jupyter.widget-view+json" not in priority
    assert priority.index("image/png") < priority.index("text/plain")


def test_nbgrader_polishes_the_feedback_through_the_course_settings(tmp_path):
    """`./dev grade` and the class hub's formgrader share the polishing: config()'s hook that
    nbgrader's GenerateFeedback calls after writing each student's pages."""
    pytest.importorskip("nbgrader", reason="nbgrader not installed (pip install -e \".[class]\")")
    course_dir = tmp_path / "course"
    page = course_dir / "feedback" / "alice" / "03-hooks" / "03-hooks.html"
    page.parent.mkdir(parents=True)
    page.write_text(PAGE.format(course=course_dir), encoding="utf-8")
    hook = course.config(course_dir).GenerateFeedback.post_convert_hook
    hook(assignment="03-hooks", student="alice",
         notebooks=[str(course_dir / "autograded" / "alice" / "03-hooks" / "03-hooks.ipynb")])
    text = page.read_text(encoding="utf-8")
    assert '<a href="#ex3_1_check">Exercise 3.1</a>' in text and str(course_dir) not in text
