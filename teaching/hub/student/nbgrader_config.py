# A student's nbgrader on the class hub (teaching/hub/classhub.py): the course's
# exchange, and the student known by the hub's user name (every server runs as one
# operating-system user, so nbgrader cannot take the name from the system).
import os

c = get_config()  # noqa: F821
c.CourseDirectory.course_id = "edutorch"
c.Exchange.root = os.environ["EDUTORCH_EXCHANGE"]
c.CourseDirectory.student_id = os.environ["JUPYTERHUB_USER"]
