# nbgrader's settings for the class hub: the course's id and its exchange, ngshare. The image installs
# this file in its Python's Jupyter config folder (<venv>/etc/jupyter), so every student's and
# instructor's server reads it.
#
# The exchange is ngshare (deploy/ngshare.yaml), a JupyterHub service: nbgrader talks to it through
# ngshare_exchange with the hub API token of the server it runs in ($JUPYTERHUB_API_TOKEN), and ngshare
# asks the hub whose token it is. So a submission is filed under the user the hub logged in, never
# under a name the student's environment or command line gives (`nbgrader submit --student=alice` is
# refused; JUPYTERHUB_USER=alice changes nothing), and only the course's instructors can collect.
# NGSHARE_URL moves it (the local hub and the tests); in the cluster ngshare_exchange finds it itself.
#
# The course id is the one `python -m course_lib instructor nbgrader` writes into the instructor's
# course folder (course_lib.lab.course.COURSE_ID), so a release and a student's list agree.
#
#   admin, once a term: ngshare-course-management create_course transpose-course instructor
#                       ngshare-course-management add_students transpose-course students.csv
#   instructor:  python -m course_lib instructor nbgrader --out ~/course
#                cd ~/course && nbgrader generate_assignment 05_bank_conflicts && nbgrader release_assignment 05_bank_conflicts
#   student:     nbgrader fetch_assignment 05_bank_conflicts && nbgrader submit 05_bank_conflicts  (or the Assignments tab)
#   instructor:  nbgrader collect 05_bank_conflicts && nbgrader autograde 05_bank_conflicts
#                nbgrader generate_feedback 05_bank_conflicts && nbgrader release_feedback 05_bank_conflicts
#   student:     nbgrader fetch_feedback 05_bank_conflicts
import os

from course_lib.lab.course import COURSE_ID
from ngshare_exchange import configureExchange

c = get_config()  # noqa: F821  (nbgrader's config loader defines it)
c.CourseDirectory.course_id = COURSE_ID
# the instructor's course folder (source/, release/, submitted/, gradebook.db) in their own home
c.CourseDirectory.root = os.environ.get("NBGRADER_COURSE_DIR", os.path.expanduser("~/course"))
configureExchange(c, os.environ.get("NGSHARE_URL") or None)
