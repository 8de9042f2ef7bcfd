"""One variant truth (issue 32, item 5): a class's variants come from the course folder's secret alone.

The instructor's view (`course=`), a student's own view (the variant key the hub hands them) and the grader's
(the key it computes from the secret and nbgrader's student id) draw through one function, so they agree; a
class without a secret has no variants and says so when asked for a named student's; a student's session
cannot compute a classmate's variant; $COURSE_LIB_SEED, the old class seed in every student's environment,
draws nothing. The hub's spawner hook (deploy/config.yaml) and the whole path through nbgrader are
tests/lab/test_hub.py's and tests/lab/test_parallel_grading.py's."""
import os

import pytest

from course_lib.errors import NotFound
from course_lib.teach import exercises as E
from course_lib.teach import variants

SECRET = "0f3c9a57d1e24b8c9e6a4d2b7c1f0e99"


@pytest.fixture
def session(monkeypatch):
    """A session with nothing of a class: no key, no id, no old seed, nothing named."""
    for name in (variants.ENV_KEY, variants.ENV_STUDENT, variants.ENV_HUB_USER, variants.ENV_OLD_SEED,
                 "NBGRADER_EXECUTION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(variants, "_explicit", [None])
    return monkeypatch


@pytest.fixture
def course(tmp_path):
    """A course folder with variants, as `instructor nbgrader --variants` leaves it."""
    (tmp_path / variants.SECRET_FILE).write_text(SECRET + "\n")
    (tmp_path / variants.VARIANTS_FILE).write_text("on\n")
    return tmp_path


def test_a_class_without_a_secret_has_no_variants_and_says_so(session):
    assert E.get("padded_tile") is E.EXERCISES["padded_tile"] and E.student() is None      # self-study: the default
    with pytest.raises(NotFound, match="no variants in this class"):
        E.variant("padded_tile", "alice")
    session.setenv(variants.ENV_OLD_SEED, "class of 2026")          # the old way draws nothing any more
    with pytest.warns(UserWarning, match="no longer read"), pytest.raises(NotFound, match="no variants in this class"):
        E.variant("padded_tile", "alice")
    E.student("alice")                                             # naming oneself draws nothing either
    with pytest.raises(NotFound, match="no variants in this class"):
        E.get("padded_tile")


def test_the_instructor_the_student_and_the_grader_draw_the_same_variant(session, course):
    drawn = {}
    for n in range(40):
        who = f"s{n}"
        instructor = E.variant("padded_tile", who, course=course)
        key = variants.student_key(SECRET, who)                    # what the hub hands them, and the grader computes
        session.setenv(variants.ENV_KEY, key)
        session.setenv(variants.ENV_HUB_USER, who)
        assert E.get("padded_tile").params == instructor.params == variants.of_key("padded_tile", key).params
        assert E.variant("padded_tile", who).params == instructor.params and E.student() == who
        drawn[who] = instructor.variant
    assert "" not in drawn.values() and len(set(drawn.values())) == len(variants.declared("padded_tile"))
    other = course.parent / "other-term"
    other.mkdir()
    (other / variants.SECRET_FILE).write_text("another term\n")
    (other / variants.VARIANTS_FILE).write_text("on\n")
    assert any(E.variant("shared_tile", w, course=other).params != E.variant("shared_tile", w, course=course).params
               for w in drawn)                                     # a new secret reshuffles


def test_a_student_cannot_compute_a_classmates_variant(session, course):
    session.setenv(variants.ENV_KEY, variants.student_key(SECRET, "alice"))
    session.setenv(variants.ENV_HUB_USER, "alice")
    assert variants.SECRET_FILE not in "".join(os.environ) and SECRET not in "".join(os.environ.values())
    for ask in (lambda: E.variant("padded_tile", "bob"), lambda: E.student("bob") and E.get("padded_tile")):
        with pytest.raises(NotFound, match="not yours to see"):
            ask()
    # the key is HMAC(secret, id): neither it nor the variants it draws are another student's key
    assert variants.student_key(SECRET, "alice") != variants.student_key(SECRET, "bob")
    assert variants.student_key(SECRET, "alice") != variants.student_key(SECRET + "x", "alice")


def test_a_submission_cannot_choose_its_variant_while_autograded(session):
    key = variants.student_key(SECRET, "bob")
    session.setenv(variants.ENV_KEY, key)
    session.setenv(variants.ENV_STUDENT, "bob")                    # the autograder's id and key
    session.setenv("NBGRADER_EXECUTION", "autograde")
    E.student("mallory")                                           # the notebook names someone else: ignored
    assert E.student() == "bob" and E.get("aos_struct").params == variants.of_key("aos_struct", key).params


def test_a_course_folder_without_a_secret_or_without_variants_says_so(session, tmp_path):
    with pytest.raises(NotFound, match="no class secret") as err:
        E.variant("padded_tile", "alice", course=tmp_path)
    assert "instructor nbgrader --variants --out" in str(err.value)
    (tmp_path / variants.SECRET_FILE).write_text(SECRET)            # the hidden shapes' seed, no variants
    with pytest.raises(NotFound, match="no variants in this class: .* exported without --variants"):
        E.variant("padded_tile", "alice", course=tmp_path)
    assert variants.course_key(tmp_path, "alice") is None, "the grader grades the default"
    (tmp_path / variants.VARIANTS_FILE).write_text("on\n")
    assert variants.course_key(tmp_path, "alice") == variants.student_key(SECRET, "alice")
    with pytest.raises(NotFound, match="name one"):
        variants.variant_key(None, tmp_path)
