"""A task's `ordered:` alternatives its plan passes over: each one preferred to the
alternative taken first that has no offering is named with why, in the words a plan with
no offering at all uses, in the table's notes, --json and `--emit sky`'s header; the
order holds for the rest."""

from __future__ import annotations

import json
import re
from pathlib import Path

AT = "2026-11-01T00:00:00+00:00"
TASK = """\
name: ord
run: python train.py
resources:
  use_spot: true
  ordered:
    - {infra: aws/us-east-1, accelerators: H100:1}
    - {infra: gcp, accelerators: H100:1}
"""


def _task(folder: Path, text: str = TASK) -> Path:
    path = folder / "task.yaml"
    path.write_text(text)
    return path


def _alone(folder: Path) -> str:
    """Why the first alternative alone has no plan: its pin's own refusal."""
    alone = folder / "alone"
    alone.mkdir()
    pin = _task(alone, "name: ord\nrun: python train.py\nresources:\n  use_spot: true\n"
                "  infra: aws/us-east-1\n  accelerators: H100:1\n")
    return str(pin)


def test_a_preferred_alternative_with_no_offering_is_named_with_why(
        cli, tmp_path: Path) -> None:  # noqa: ANN001
    refused = cli("plan", _alone(tmp_path), "--at", AT)
    assert refused.exit_code == 1
    why = " ".join(refused.stderr.split()).split("job ord: ", 1)[1]
    why = why.split("; change ")[0]  # (the key its own file changes)
    assert why.startswith("no spot price known as of ")
    task = _task(tmp_path)
    shown = cli("plan", task, "--at", AT)
    assert shown.exit_code == 0, shown.output
    text = " ".join(shown.stdout.split())
    [line] = re.findall(r"ordered: alternative 1 \(.*?\(alternative 2 first\)", text)
    assert line.startswith(f"ordered: alternative 1 (H100:1 spot in aws, us-east-1): {why}")
    assert line.endswith("passed over: the order holds for the rest (alternative 2 first)")
    assert "ordered: alternative 2 (gcp " in text  # the order still holds for the rest
    doc = json.loads(cli("plan", task, "--at", AT, "--json").stdout)
    assert any(n.startswith("ordered: alternative 1 (H100:1 spot in aws, us-east-1): "
                            f"{why}") for n in doc["jobs"][0]["notes"])
    emitted = cli("plan", task, "--at", AT, "--emit", "sky").stdout
    [comment] = [c for c in emitted.splitlines() if c.startswith("# ordered: alternative 1")]
    assert f"): {why}" in comment and comment.endswith("(alternative 2 first).")


def test_an_order_whose_first_choice_has_offerings_passes_none_over(
        cli, tmp_path: Path) -> None:  # noqa: ANN001
    task = _task(tmp_path, TASK.replace("aws/us-east-1, accelerators: H100:1",
                                        "gcp, accelerators: L4:1"))
    shown = cli("plan", task, "--at", AT)
    assert shown.exit_code == 0, shown.output
    assert "passed over" not in shown.stdout


def test_a_preferred_alternative_left_out_by_the_deadline_says_so(
        cli, tmp_path: Path) -> None:  # noqa: ANN001
    """Priced, but every offering of it misses the deadline (an H100 is known, a T4 is
    estimated far slower): the plan counts them as it counts those it leaves out."""
    task = _task(tmp_path, "name: ord\nrun: python train.py\ncostsched:\n"
                 "  throughputs: {H100: 100, T4: 1}\n  steps: 360000\n  deadline: 20h\n"
                 "resources:\n  ordered:\n    - {infra: gcp, accelerators: T4:1}\n"
                 "    - {infra: gcp, accelerators: H100:1}\n")
    shown = cli("plan", task, "--at", AT)
    assert shown.exit_code == 0, shown.output
    text = " ".join(shown.stdout.split())
    [line] = re.findall(r"ordered: alternative 1 \(.*?\(alternative 2 first\)", text)
    assert re.match(r"ordered: alternative 1 \(T4:1 [^)]*in gcp\): its \d+ offerings? left "
                    r"out: \d+ misses deadline; passed over", line), line


TRIAL = """\
name: gridvar
run: python3 train.py
resources:
  ordered:
    - {accelerators: H100:1, use_spot: true, infra: aws/us-east-1}
    - {accelerators: L4:1, use_spot: true}
costsched: {throughputs: {L4: 33, H100: 100}, steps: 3000}
"""


def test_a_passed_over_alternative_is_said_once_naming_its_own_keys(
        cli, tmp_path: Path) -> None:  # noqa: ANN001
    """Each alternative writes its own use_spot: the one passed over is told to change its
    own (ordered[0]), not the one the plan takes; and its reason is said once, not again
    as a shape of the job's set left out."""
    task = _task(tmp_path, TRIAL)
    shown = cli("plan", task, "--at", AT)
    assert shown.exit_code == 0, shown.output
    text = " ".join(shown.stdout.split())
    assert text.count("alternative 1 (H100:1 spot in aws, us-east-1): ") == 1, text
    assert "H100:1 left out" not in text
    assert "resources.ordered[0].use_spot" in text
    assert "ordered[1]" not in text
    notes = json.loads(cli("plan", task, "--at", AT, "--json").stdout)["jobs"][0]["notes"]
    assert sum("alternative 1 (H100:1" in n for n in notes) == 1, notes


def test_the_emitted_task_writes_text_as_typed(cli, tmp_path: Path) -> None:  # noqa: ANN001
    """A file is written as text, never through the terminal's markup: its header names
    the task's file as it is ('exp[aws]/task.yaml', no markup escape before '['), as does
    the plan's own line (`pip install 'costsched[aws]'` likewise)."""
    folder = tmp_path / "exp[aws]"
    folder.mkdir()
    task = _task(folder, TRIAL)
    emitted = cli("plan", task, "--at", AT, "--emit", "sky").stdout
    assert "\\[" not in emitted, emitted
    [comment] = [c for c in emitted.splitlines() if c.startswith("# ordered: alternative 1")]
    assert f"change resources.ordered[0].use_spot in {task};" in comment
