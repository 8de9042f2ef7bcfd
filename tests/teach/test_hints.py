"""The hint a wrong result gets names the cause a student can act on (issue 25): the untouched stub of
notebook 03 (every thread stores to the same element), a wrong block-to-tile mapping, a tile padded by 2
(2-way, not one bank) and notebook 12's cp.async kernel that reads before its copies land (out written,
but with poison). Simulator only; nothing timed."""
import pytest

from course_lib.notebook import magic
from course_lib.teach import exercises as E
from course_lib.teach import solutions


def _report(key, pairs=(), source=None):
    src = source if source is not None else solutions.body(key)
    for old, new in zip(pairs[::2], pairs[1::2]):
        assert old in src
        src = src.replace(old, new)
    ex = E.get(key)
    return repr(E.check(ex, magic.compile_cell("", src)[1][ex.kernel]))


def _hint_of_first_problem(text):
    return next(line for line in text.splitlines() if "hint:" in line)


def test_the_untouched_stub_hears_that_every_thread_stores_to_one_place():
    hint = _hint_of_first_problem(_report("column_read", source=solutions.stub("column_read")))
    assert "same" in hint and "threadIdx" in hint and "out[c * rows + r]" not in hint


def test_a_wrong_block_to_tile_mapping_gets_its_own_hint():
    hint = _hint_of_first_problem(_report("column_read", ("int r = blockIdx.y * 32", "int r = blockIdx.x * 32",
                                                           "int c = blockIdx.x * 8", "int c = blockIdx.y * 8")))
    assert "blockIdx" in hint and "tile" in hint and "out[c * rows + r]" not in hint


def test_a_tile_padded_by_two_banks_is_not_told_one_bank():
    text = _report("padded_tile", ("[32 + 2]", "[32 + 4]"))        # 2-byte elements: 4 of them are two banks
    assert "2.0 wavefronts per request" in text and "hit one bank" not in text


def test_the_padding_hint_asks_for_the_idea_before_the_fix():
    """padded_tile's first hint leads to banks and element sizes; it does not hand over `[32][32 + 2]`."""
    text = _report("padded_tile", ("[32 + 2]", "[32 + 1]"))        # one element: half a bank, still 1.5-way
    hint = _hint_of_first_problem(text)
    assert "1.5 wavefronts per request" in text and "4 bytes wide" in hint and "how many bytes is one unsigned short" in hint
    assert "[32][32 + 2]" not in hint and "[32][32 + ?]" in hint


def test_reading_before_the_copies_land_is_not_told_nothing_was_written():
    text = _report("async_tile", ("__pipeline_wait_prior(0);", "__pipeline_wait_prior(1);"))
    hint = _hint_of_first_problem(text)
    assert "nothing was written" not in hint and "reads the tile before the cp.async copy of line" in hint
