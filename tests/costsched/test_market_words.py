"""A market has one spelling per reader: 'on-demand' where a person reads it (tables,
messages, the dashboard, the docs), 'on_demand' where a program does (--json, exports,
the Python API's frames, the store), the same as the JSON keys that carry it
('on_demand_usd'); either is accepted wherever a user types one."""

from __future__ import annotations

from costsched.migration.launcher import CapacityError
from costsched.model import ALL_MARKETS, Offering
from costsched.vocabulary import canonical, word

ON_DEMAND = Offering("aws", "us-east-1", "", "p3.2xlarge", "on_demand", "V100", 1)


def test_each_market_reads_as_a_word_and_is_typed_either_way() -> None:
    for market in ALL_MARKETS:
        assert "_" not in word(market)
        assert canonical(word(market), ALL_MARKETS) == market
        assert canonical(market.upper(), ALL_MARKETS) == market


def test_a_launch_that_cannot_be_had_names_its_market_in_words() -> None:
    said = str(CapacityError(ON_DEMAND, "InsufficientInstanceCapacity"))
    assert said == "aws us-east-1 p3.2xlarge on-demand: InsufficientInstanceCapacity"
