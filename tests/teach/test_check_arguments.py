"""What exercises.check says to arguments that are not what it takes (issue 36): a course_lib ArgumentError
naming the argument and what to give, at once, before any kernel runs; and the class seed in the environment
when it is not text. Runs nothing on the simulator."""
import numpy as np
import pytest

import course_lib as cl
from course_lib.teach import exercises, variants


@pytest.mark.parametrize("seed", ["abc", -1, 1.5, True, None, "7"])
def test_a_seed_that_is_not_a_whole_number_from_zero_is_refused_by_name(seed):
    with pytest.raises(cl.ArgumentError, match=r"seed=.*whole number, 0 or more") as err:
        exercises.check("shared_tile", lambda *a: None, seed=seed)
    assert err.value.hint and "seed=7" in err.value.hint


def test_numpy_and_large_whole_numbers_are_seeds():
    assert exercises._seed(np.int64(3)) == 3 and exercises._seed(2 ** 70) == 2 ** 70


def test_a_variant_key_that_is_not_one_is_named_with_the_fix(monkeypatch):
    # issue 32: a student's own variant key replaced the class seed in their environment
    monkeypatch.delenv("COURSE_LIB_SEED", raising=False)
    for bad in ("key-\udcff-bytes", "abc123"):                       # the bytes b"key-\xff-bytes"; a truncated paste
        monkeypatch.setenv(variants.ENV_KEY, bad)
        with pytest.raises(cl.ArgumentError, match=r"\$COURSE_LIB_VARIANT_KEY is not a variant key") as err:
            variants.own_key()
        assert "instructor variants --keys" in err.value.hint
    monkeypatch.setenv(variants.ENV_KEY, variants.student_key("a class's secret", "alice"))
    assert variants.own_key() == variants.student_key("a class's secret", "alice")
