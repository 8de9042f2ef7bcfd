# nbgrader's exchange for the class hub: where released assignments wait and submissions arrive.
# The image installs this file in its Python's Jupyter config folder (<venv>/etc/jupyter), so every
# student's and instructor's server reads it. deploy/config.yaml mounts one shared volume
# (ReadWriteMany) at /srv/nbgrader/exchange in every server; NBGRADER_EXCHANGE moves it (the tests
# use a temporary folder). Every student's server runs as the same OS user (jovyan, uid 1000), so a
# student's submissions are named after their hub user (JUPYTERHUB_USER), set here as nbgrader's
# student id; the users in NBGRADER_INSTRUCTORS are left out (for them student_id filters whose
# submissions `nbgrader collect` takes, and must stay '*').
#
#   instructor:  nbgrader generate_assignment hw05 && nbgrader release_assignment hw05
#   student:     nbgrader fetch_assignment hw05 && nbgrader submit hw05  (or the Assignments tab)
#   instructor:  nbgrader collect hw05            -> submitted/<student>/hw05/
import os

c = get_config()  # noqa: F821  (nbgrader's config loader defines it)
c.CourseDirectory.course_id = os.environ.get("NBGRADER_COURSE_ID", "transpose")
c.Exchange.root = os.environ.get("NBGRADER_EXCHANGE", "/srv/nbgrader/exchange")
# the instructor's course folder (source/, release/, submitted/, gradebook.db) in their own home
c.CourseDirectory.root = os.environ.get("NBGRADER_COURSE_DIR", os.path.expanduser("~/course"))

_user = os.environ.get("JUPYTERHUB_USER", "")
_instructors = {name.strip() for name in os.environ.get("NBGRADER_INSTRUCTORS", "").split(",") if name.strip()}
if _user and _user not in _instructors:
    c.CourseDirectory.student_id = _user
