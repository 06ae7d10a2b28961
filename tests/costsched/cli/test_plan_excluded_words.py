"""Why `plan` leaves offerings out, counted in the words of the task's own keys and
values (text and --json alike), never the price frame's column names."""

from __future__ import annotations

import json
import re
from pathlib import Path

INTERNAL = re.compile(r"\b(gpu_model|gpu_count|instance_type|market) not allowed\b")

SIZED = """\
name: sized
resources:
  cpus: 8+
  memory: 32+
  any_of:
    - cloud: aws
      region: us-east-1
      accelerators: A10G:1
    - cloud: gcp
      region: us-central1
      accelerators: L4:1
run: 'true'
"""

SPOT = """\
name: spot
resources:
  accelerators: {L4: 1, A10G: 1}
  use_spot: true
run: 'true'
"""


def _left_out(cli, path: Path) -> tuple[str, dict[str, int]]:  # noqa: ANN001
    text = cli("plan", path)
    assert text.exit_code == 0, text.output
    found = re.search(r"\d+ offerings left out: .*", " ".join(text.stdout.split()))
    assert found, text.stdout
    line = found[0]
    out = cli("plan", path, "--json")
    assert out.exit_code == 0, out.output
    return line, json.loads(out.stdout)["rankings"][0]["excluded"]


def test_sizes_are_named_for_the_instance_types_they_leave_out(cli, tmp_path: Path) -> None:  # noqa: ANN001
    path = tmp_path / "sized.yaml"
    path.write_text(SIZED)
    line, excluded = _left_out(cli, path)
    assert excluded["below resources.cpus 8+ or resources.memory 32+"] > 0, excluded
    assert "below resources.cpus 8+ or resources.memory 32+" in line
    assert not INTERNAL.search(line) and not any(INTERNAL.search(k) for k in excluded)
    assert not any("instance type" in k for k in excluded)  # the task names none
    # a key each alternative writes, said once
    assert "(accelerators in resources.any_of)" in line and "any_of[0]" not in line


def test_market_and_gpus_are_named_by_the_task_s_keys(cli, tmp_path: Path) -> None:  # noqa: ANN001
    path = tmp_path / "spot.yaml"
    path.write_text(SPOT)
    line, excluded = _left_out(cli, path)
    assert excluded["other market than spot (resources.use_spot)"] > 0, excluded
    assert excluded["other GPU than A10G or L4 (resources.accelerators)"] > 0, excluded
    assert "other market than spot (resources.use_spot)" in line
    assert not INTERNAL.search(line) and not any(INTERNAL.search(k) for k in excluded)


def test_a_job_file_s_limits_are_named_by_its_keys(cli, tmp_path: Path) -> None:  # noqa: ANN001
    path = tmp_path / "job.yaml"
    path.write_text(
        "name: j\nrun: python x.py\nmodel: ResNet-50 (batch size 64)\nsteps: 20000\n"
        "constraints: {max_price: 1.0, markets: [spot]}\n"
    )
    line, excluded = _left_out(cli, path)
    assert excluded["over constraints.max_price"] > 0, excluded
    assert excluded["other market than spot (constraints.markets)"] > 0, excluded
    assert "over max_price" not in line and not INTERNAL.search(line)


APART = """\
name: apart
resources:
  any_of:
    - cloud: aws
      region: us-east-1
      accelerators: A10G:1
      memory: 64+
      cpus: 4+
    - cloud: gcp
      region: us-central1
      accelerators: L4:1
      memory: 32+
      cpus: 8+
run: 'true'
"""


def test_sizes_each_alternative_writes_are_named_with_the_accelerators(
        cli, tmp_path: Path) -> None:  # noqa: ANN001
    # Sizes written differently in each alternative narrow their instance types too: the
    # types left out are not blamed on the accelerators alone.
    path = tmp_path / "apart.yaml"
    path.write_text(APART)
    line, excluded = _left_out(cli, path)
    said = "other instance type (accelerators, cpus or memory in resources.any_of)"
    assert excluded[said] > 0, excluded
    assert said in line and "other instance type (accelerators in" not in line
