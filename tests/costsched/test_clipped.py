"""A failure's reason in the all-jobs `status` is cut to fit one line: a path in it is
shortened from its left (the file it names kept), and a cut never leaves a parenthesis
open (`clipped`)."""

from __future__ import annotations

import pytest

from costsched.cli.status_lines import BRIEF_CHARS, failure_lines
from costsched.clipped import clipped
from costsched.service.jobs.statuses import Failure

LINE = ("python: can't open file '/work/trial/home/.local/share/costsched/instances/"
        "3-f575ce31f4-j3-m7-0/code/no_such_script.py': [Errno 2] No such file or directory")


def test_a_failure_cut_keeps_the_file_name_and_closes_its_parenthesis() -> None:
    failure = Failure(exit_code=2, phase="", detail=f"exit code 2 ({LINE})",
                      log_tail=["Traceback ...", LINE])
    [said] = failure_lines(failure, brief=True, job_id=3)
    assert "'.../code/no_such_script.py'" in said, said  # was: '/work/.../insta...
    head = said.removesuffix(" (`costsched status 3` says it in full, with its last lines)")
    assert head != said and len(head) <= BRIEF_CHARS
    assert head.count("(") == head.count(")"), head  # was: one left open


@pytest.mark.parametrize("limit", [20, 40, 60, 90])
def test_no_cut_leaves_a_parenthesis_open(limit: int) -> None:
    text = "failed with exit code 1 (Traceback (most recent call last): " + "x" * 80 + ")"
    said = clipped(text, limit)
    assert len(said) <= limit and said.count("(") == said.count(")"), said
    assert "..." in said


def test_a_line_that_fits_is_left_as_it_is() -> None:
    assert clipped(LINE, len(LINE)) == LINE
    assert clipped("see /a/b/c/d.py", 100) == "see /a/b/c/d.py"
    assert clipped("see /aaaa/bbbb/cccc/d.py now", 21) == "see .../cccc/d.py now"


def test_a_cut_falls_between_words_and_names_where_the_reason_is_whole() -> None:
    detail = ("checkpoint directory /tmp/x/y/ckpt/job-6-820b13175b: cannot be created "
              "(No such file or directory)")
    failure = Failure(exit_code=None, phase="", detail=detail, log_tail=[])
    [said] = failure_lines(failure, brief=True, job_id=6)
    assert said == ("failed: checkpoint directory .../ckpt/job-6-820b13175b: cannot be "
                    "created (No such file or...) (`costsched status 6` says it in full)")
    # was: '(No such file or direc...)' and '... shows its last lines' (there were none)


@pytest.mark.parametrize(("limit", "said"), [
    (27, "cannot be created (No...)"), (23, "cannot be created..."), (8, "canno..."),
])
def test_no_cut_splits_a_word_or_leaves_an_empty_parenthesis(limit: int, said: str) -> None:
    text = "cannot be created (No such file or directory)"
    assert clipped(text, limit) == said
