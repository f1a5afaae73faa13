# The instructor's nbgrader on the class hub (teaching/hub/classhub.py): the course
# folder ~/course with the settings of `./dev release` and `./dev grade`
# (teaching/course.py), so the formgrader's Generate, Autograde and Feedback buttons and
# the `nbgrader` commands in a terminal give what those commands give.
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # teaching/
import course  # noqa: E402

c = get_config()  # noqa: F821
c.merge(course.config(Path(os.environ["HOME"]) / "course"))
c.Exchange.root = os.environ["EDUTORCH_EXCHANGE"]
# every server runs as one operating-system user: a submission's owner is not its student
c.ExchangeCollect.check_owner = False
