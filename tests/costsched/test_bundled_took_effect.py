"""`bundled_prices.took_effect`: when the bundled price of one offering that held at a time
took effect, as `prices_at` lists it (which a charge's price date was read from, one whole
list per placement), for every offering the list has, at several times."""

from __future__ import annotations

import subprocess
import sys
from datetime import datetime, timezone

import pytest

from costsched import bundled_prices

TIMES = [datetime(2020, 1, 1, tzinfo=timezone.utc), datetime(2024, 6, 1, tzinfo=timezone.utc),
         datetime(2025, 10, 15, tzinfo=timezone.utc), datetime(2026, 11, 30, tzinfo=timezone.utc)]


@pytest.mark.parametrize("when", TIMES)
def test_each_offering_s_date_is_the_one_prices_at_lists(when: datetime) -> None:
    listed = bundled_prices.prices_at(when)
    for r in listed:
        assert bundled_prices.took_effect(r["cloud"], r["region"], r["zone"],
                                          r["instance_type"], r["market"], when) \
            == r["effective_at"], r
    assert listed or when == TIMES[0]


def test_an_offering_not_listed_then_has_no_date() -> None:
    assert bundled_prices.took_effect("aws", "us-east-1", "", "no.such", "on_demand",
                                      TIMES[-1]) is None
    [first] = [r for r in bundled_prices.prices_at(TIMES[-1])][:1]
    assert bundled_prices.took_effect(first["cloud"], first["region"], first["zone"],
                                      first["instance_type"], first["market"],
                                      datetime(2000, 1, 1, tzinfo=timezone.utc)) is None


def test_one_offering_s_date_reads_only_its_type_s_rows() -> None:
    """A charge's price date reads the rows of its offering's type, not the whole lists
    (thousands of rows made dicts for one date): in a fresh interpreter, the lists'
    reader is not asked for either price file."""
    probe = ("from datetime import datetime, timezone\nfrom costsched import bundled_prices as b\n"
             "asked = []\nread = b._read\n"
             "b._read = lambda name: asked.append(name) or read(name)\n"
             "when = datetime(2026, 11, 30, tzinfo=timezone.utc)\n"
             "for market, zone in (('spot', 'us-east-1a'), ('on_demand', '')):\n"
             "    b.took_effect('aws', 'us-east-1', zone, 'g4dn.xlarge', market, when)\n"
             "print(' '.join(n for n in asked if 'prices' in n))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True)
    assert out.stdout.split() == []
