# The instructor's nbgrader on the class hub (teaching/hub/classhub.py): the course
# folder ~/course with the settings of `./dev release` and `./dev grade`
# (teaching/course.py), so the formgrader's Generate, Autograde and Feedback buttons and
# the `nbgrader` commands in a terminal give what those commands give.
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # teaching/hub/
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # teaching/
import course  # noqa: E402

c = get_config()  # noqa: F821
c.merge(course.config(Path(os.environ["HOME"]) / "course"))  # feedback polished as ./dev grade's
course.quiet_nbgrader()  # and no SQLAlchemy warning in the hub's log
c.Exchange.root = os.environ["EDUTORCH_EXCHANGE"]
# with an OS user per account (./dev hub --system-users) a submission is its owner's, whatever
# student it names (teaching/hub/owned_collect.py); with one OS user for every server nbgrader
# cannot tell, and its owner check is off
if os.environ.get("EDUTORCH_SYSTEM_USERS") == "1":
    c.ExchangeFactory.collect = "owned_collect.OwnedCollect"
else:
    c.ExchangeCollect.check_owner = False
