"""An hour of work assumed for a job file that gives none is never called measured, nor
the job spec's throughputs, and no speed flag compares a measurement against it."""

from __future__ import annotations

from costsched import throughput as tp
from costsched.measured import SpeedCheck, basis_words

ASSUMED = "job spec sky.yaml: 1.0 h on 1xA100-80GB, assumed (no work given)"
GIVEN = "job spec sky.yaml: 3.0 h on 1xA100-80GB, given"


def table(source: str) -> tp.ThroughputTable:
    return tp.ThroughputTable().overlay([{
        "model": "linreg", "gpu_model": "A100-80GB", "gpu_count": 1,
        "steps_per_second": 1.0, "source": source}])


def test_an_estimate_from_an_assumed_hour_says_so() -> None:
    basis = table(ASSUMED).get("linreg", "H100", 1).basis
    assert "A100-80GB" in basis and "measured" not in basis
    assert tp.ASSUMED_WORDS in basis
    given = table(GIVEN).get("linreg", "H100", 1).basis
    assert "measured" not in given and "hours of work given" in given


def test_no_flag_against_an_assumed_speed() -> None:
    words = basis_words(ASSUMED)
    assert words == tp.ASSUMED_WORDS and "throughputs" not in words
    check = SpeedCheck(3, "linreg-work", "linreg", "A100-80GB", 1, 1.0, 58.5, words, 1.5)
    assert not check.flagged
    declared = SpeedCheck(3, "linreg-work", "linreg", "A100-80GB", 1, 1.0, 58.5,
                          basis_words("job spec sky.yaml"), 1.5)
    assert declared.flagged and "the job spec's throughputs" in declared.line()
    assert basis_words(GIVEN) == "the hours of work the job spec gives"


def test_a_multi_node_speed_names_its_nodes() -> None:
    check = SpeedCheck(3, "w", "w", "A100-80GB", 1, 1.0, 5.0, "the job spec's throughputs",
                       1.5, nodes=2)
    assert " on 2 nodes of 1xA100-80GB, 5.00x faster" in check.line()
