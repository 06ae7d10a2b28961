"""What the catalog offers instead of a GPU a task's cloud does not sell at the count asked:
its counts there, a close model of its family there at that count, the other clouds."""

from __future__ import annotations

from costsched.catalog_offers import offered_instead


def test_a_cloud_without_the_model_at_the_count_names_a_close_one_it_has() -> None:
    # Azure sells A100 40GB only eight at a time, if at all; one A100 80GB it does sell.
    said = offered_instead([("A100", 1)], {"azure"})
    assert "on azure a close model is offered: A100-80GB:1 (Standard_NC24ads_A100_v4)" in said
    assert "A100:1 is offered on gcp (a2-highgpu-1g)" in said


def test_no_close_model_is_named_where_the_cloud_has_the_model_at_that_count() -> None:
    said = offered_instead([("A100-80GB", 1)], {"gcp"})
    assert not any("close model" in line for line in said), said
