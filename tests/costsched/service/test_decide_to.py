"""A move the user names (`migrate --to`): names in any case, and a typo answered with the
close names, in one line."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from costsched.model import InvalidInput, Job
from costsched.service.decide import decide_to, parse_offering
from costsched.throughput import ThroughputTable

TABLE = ThroughputTable()
AT = datetime(2020, 3, 1, 6, tzinfo=timezone.utc)
JOB = Job("a3c", "python train.py", "A3C", 3e6, checkpoint_gb=2.0, checkpoint_hours=0.5)
HERE = ("aws", "us-east-1", "us-east-1b", "p3.2xlarge", "spot")


def test_an_offering_is_named_in_any_case(recorded_store) -> None:
    target = parse_offering("AWS US-EAST-1 P3.2XLARGE On-Demand")
    assert (target.cloud, target.market) == ("aws", "on_demand")
    lower = decide_to(recorded_store, JOB, parse_offering("aws us-east-1 p3.2xlarge on-demand"),
                      current=HERE, steps_left=1e6, at=AT, table=TABLE)
    upper = decide_to(recorded_store, JOB, target, current=HERE, steps_left=1e6, at=AT,
                      table=TABLE)
    assert upper.choice == lower.choice
    assert upper.offering.region == "us-east-1" and upper.offering.instance_type == "p3.2xlarge"
    assert parse_offering("aws:us-east-1a:p3.2xlarge:ON-DEMAND").market == "on_demand"


@pytest.mark.parametrize(("written", "says"), [
    ("awz us-east-1a p3.2xlarge spot", "cloud 'awz': expected one of aws, gcp, azure; did "
                                       "you mean 'aws'?"),
    ("aws us-east-1a p3.2xlarge spto", "market 'spto': expected one of"),
    ("aws us-east-1 p3.2xlarg on-demand", "(no aws on-demand price for instance type "
                                          "'p3.2xlarg'); did you mean 'p3.2xlarge'"),
    ("aws us-eats-1 p3.2xlarge on-demand", "(no aws on-demand price in 'us-eats-1'); did you "
                                           "mean 'us-east-1'"),
])
def test_a_typo_gets_the_close_names(recorded_store, written: str, says: str) -> None:
    with pytest.raises(InvalidInput) as err:
        decide_to(recorded_store, JOB, parse_offering(written), current=HERE, steps_left=1e6,
                  at=AT, table=TABLE)
    assert says in str(err.value) and "\n" not in str(err.value)


@pytest.fixture()
def one_zone(store):  # noqa: ANN001, ANN201
    """A store whose only aws spot price is of g4dn.xlarge in us-west-2a (per zone)."""
    from price_collectors.base import rows_frame

    store.ingest(rows_frame([("aws", "us-west-2", "us-west-2a", "g4dn.xlarge", "spot",
                              "linux", "T4", 1, 4, 16.0, 0.15, AT)], "import:test"))
    return store


@pytest.mark.parametrize(("written", "says"), [
    # a region whose spot prices are per zone: the zones that have the price, not the input
    ("aws us-west-2 g4dn.xlarge spot", "(no aws spot price in 'us-west-2'); us-west-2 is "
     "priced per zone: aws spot prices for g4dn.xlarge in us-west-2a; name a zone, e.g. "
     "'aws us-west-2a g4dn.xlarge spot'"),
    ("aws us-west-2 p3.2xlarge spot", "us-west-2 is priced per zone, and p3.2xlarge has no "
     "aws spot price in any of them (zones priced: us-west-2a)"),
    # a zone of a region priced as a whole: the region
    ("aws us-east-1a p3.2xlarge on-demand", "(no aws on-demand price in 'us-east-1a'); "
     "us-east-1a is in us-east-1, priced as a whole: name the region, e.g. "
     "'aws us-east-1 p3.2xlarge on-demand'"),
    # a zone of that region's shape that it does not have: said, as plan says it
    ("aws us-east-1z p3.2xlarge on-demand", "(no aws on-demand price in 'us-east-1z'); "
     "'us-east-1z': not a zone of us-east-1; its zones are us-east-1a, us-east-1b"),
])
def test_a_place_named_at_the_other_level_gets_the_level_priced(one_zone, written: str,
                                                                says: str) -> None:
    with pytest.raises(InvalidInput) as err:
        decide_to(one_zone, JOB, parse_offering(written), current=HERE, steps_left=1e6, at=AT,
                  table=TABLE)
    assert says in str(err.value) and "did you mean" not in str(err.value)


@pytest.fixture()
def zone_priced(store):  # noqa: ANN001, ANN201
    """GCP spot prices: us-east4 as a whole for n1-standard-8, g2-standard-4 in us-east4-a
    alone (a zone's price imported), and g2-standard-4 in us-central1 as a whole."""
    from price_collectors.base import rows_frame

    store.ingest(rows_frame([
        ("gcp", "us-east4", "", "n1-standard-8", "spot", "linux", "V100", 1, 8, 30.0, 0.4, AT),
        ("gcp", "us-east4", "us-east4-a", "g2-standard-4", "spot", "linux", "V100", 1, 4, 16.0,
         0.25, AT),
        ("gcp", "us-central1", "", "g2-standard-4", "spot", "linux", "V100", 1, 4, 16.0, 0.3,
         AT)], "import:test"))
    return store


@pytest.mark.parametrize(("written", "hint"), [
    # the type is priced in a zone of the region named: that zone's offering, never the
    # name typed
    ("gcp us-east4 g2-standard-4 spot", "did you mean 'gcp us-east4-a g2-standard-4 spot'?"),
    ("GCP US-EAST4 G2-STANDARD-4 SPOT", "did you mean 'gcp us-east4-a g2-standard-4 spot'?"),
])
def test_a_type_priced_at_another_level_names_the_offering_that_has_it(
        zone_priced, written: str, hint: str) -> None:
    with pytest.raises(InvalidInput) as err:
        decide_to(zone_priced, JOB, parse_offering(written), current=HERE, steps_left=1e6,
                  at=AT, table=TABLE)
    said = str(err.value)
    assert "(no gcp spot price for instance type" in said, said
    assert said.endswith(hint), said
    assert "did you mean 'g2-standard-4'" not in said.lower()
    # following the hint works: each offering it names is found
    import re

    named = re.findall(r"'(gcp [^']+)'", said.split("did you mean", 1)[1])
    assert named
    for offering in named:
        moved = decide_to(zone_priced, JOB, parse_offering(offering), current=HERE,
                          steps_left=1e6, at=AT, table=TABLE)
        assert moved.offering.zone == "us-east4-a"
        assert moved.offering.instance_type == "g2-standard-4"
