"""How money and hours are written, everywhere: the command line, the reports (text and
HTML), the dashboard and every message.

- One amount alone (`usd`): dollars and cents ('$1,234.50'), or two significant digits
  under a cent ('$0.0049') so that a small amount never reads as $0.00, to MAX_DECIMALS;
  zero alone is '$0.00'.
- Amounts read together that are not charges (`usd_all`: a plan's figures, a sentence
  that itemises them): one precision for them all, the decimals the smallest of
  them needs by the rule above, between 2 and MAX_DECIMALS; a zero among them reads at
  it ('overlap $0.0000' beside 'restart $0.0354'), as does every amount written at a
  line's `places`.
- Charged figures (what the store says was charged: placements' costs and hours, egress,
  a job's spend and its parts, totals of them) read at one precision (`CHARGED`) in
  `status`, `report` (text and HTML), the dashboard, the daemon's log and the lines of
  `stop`, `start` and `migrate` that state a stored cost: money at MAX_DECIMALS
  ('$0.0049', '$12.3400') and hours alike ('0.0617'), whatever the store holds, so that a
  job's figures never change their decimals because another job settled a smaller
  charge; a placement's hours at more where its hours times its price, as written, would
  not make its amount as written (`placement_times`, `product_hours`: 0.036 h beside
  $0.03 at $0.9180/h, never 0.04 h), in every view alike. A charge below the last decimal
  reads '<$0.0001' ('-<$0.0001' below zero), never zero, a placement still running from
  its first moment (`charging`). Zero reads at the same decimals (`charged_usd`,
  `charged_hours`: '$0.0000' beside '$0.0092'). A total is the sum of its
  parts as written (`total_as_written`), so that a line that itemises visibly adds up:
  a job's cost the sum of its charges as written, a report's total the sum of its job
  rows as written, hours alike; a job's cost so reads alike in `status`, `status JOB`,
  `report`, `report --billed` and the dashboard. A total so written may differ from its
  exact figure (JSON's) rounded once by a few units of the last decimal; the report says
  so where it does (a view takes no more decimals for a total of its own, a report of a
  period). The same precision writes the figures set beside charges: the report's
  estimate-versus-actual hours and dollars, a budget's cap, spent and forecast
  ('$5.0000 │ $0.0049'), and a running job's forecast on the dashboard (its spend as
  written plus the rest as written: never below the spend); JSON's are exact.
- A cost the user weighs (`decimals_kept`: a job's expected cost at launch, the cost of
  staying against moving): under a dime, at MAX_DECIMALS ('$0.0129', not '$0.01'), so
  that it reads as the plan's table wrote it and two such costs never read alike.
- Figures shown together add up as shown (`as_written`): a figure made of others shown
  beside it is made of them as they read, never rounded on its own. A difference beside
  its two terms (a saving beside its baseline and the spend) is the difference of the
  terms as written (`difference_as_written`); a total beside its cells is the sum of the
  cells as written (`sum_as_written`), as a bill's total is the sum of its lines.
- A saving (or loss) is no amount where it is a sum's rounding error (`no_noise`: the
  same charges added up in another order, under NOISE), in the JSON too (0, never
  4.3e-19), nor where it is smaller than the last decimal shown: it reads zero, and its
  baseline as the spend beside it (never 'saved $0.000001' by a job that ran on it).
- Two amounts compared in words (`apart`: 'more than the $0.00028 left', 'would pass
  the budget of'): at the decimals at which they read in the order they stand in, never
  '$0.0003 more than $0.0003'.
- Hours times a price (`hours_times`, `times`): the price at its own decimals
  (`price_places`: '$0.07962', the price the charge used, never '$0.0796'; '$1.0060' for
  an average charged a float's error off $1.006, never '$1.006000'), the hours
  with the decimals that make their product with the price, as written, agree with the
  amount as written; a figure that grows (a running placement's hours) at the same
  decimals call after call (`steady_hours`); no product where none reads as the amount.
- A stored price per hour (`stored_price`: an offering's, as collected or bundled, one
  instance's or a gang's sum of them, the price a charge used): alone, at its own
  decimals (`stored_places`, MAX_DECIMALS to PRICE_MOST: '$0.07962', '$0.9180',
  '$30.13118'), never rounded, the same figure in every table, line and page (plan,
  gpus, prices, catalog, status, report, the dashboard, a product's price), never
  '$0.0796' in one and '$0.07962' in another.
  A column of them (`stored_prices`, `derived_prices`) reads at one precision, the most
  decimals one of them takes ('$0.159240' above '$0.361800'; '$7.3600' above '$11.4400'),
  aligned right. An average charged is the price where it was charged at one
  (its own decimals); across prices it has more digits than PRICE_MOST, is no stored
  price and reads at MAX_DECIMALS ('$0.2457'). A figure per hour made by dividing
  (`derived_per_hour`) is no stored price either: a cost per hour of assumed work at
  MAX_DECIMALS ('$0.0796'), as the clouds quote prices; a price per GPU-hour at the
  decimals of the price it divides ('$0.00995' of $0.07962 for 8 GPUs), so that a one-GPU
  offering's reads as its price.
- A figure the user set, a budget or a cap (`given`): alone, as typed, '$2.00' for 2,
  '$2.50', '$0.005' (its own decimals, between 2 and MAX_DECIMALS); in a line or a row
  with other amounts, at their precision (`places`; more only where it needs more to be
  written exactly), as every amount of a line or row is: 'forecast $0.0142 passes its
  budget of $0.0060', a budget's row '$0.0060 │ $0.0023 │ $0.0015 │ $0.0142', '$1.9950
  spent + $0.0100 would pass the budget of $2.0000'.
- Figures that are not charges (a plan's expected costs, a bill's lines), in a table:
  each column at the precision it needs (`usd_all` down the column), and an amount
  written beside the table at no fewer decimals than the column it is read against; a
  plan's baseline, the same figure in every plan of its job, at MAX_DECIMALS as its price
  is (more where its column takes more): '$0.7590' under a column of '$0.759' as of '$0.0123'.
- Hours (`hours`, `hours_all`): the same rule as money, without the sign ('0.03',
  '1.04', '1,234.50'; '0.0049' for a few seconds), so that 0.03 h never reads as 0.0;
  charged hours at `CHARGED`'s.
- Ratios (`ratio`: a measured speed against the planned one, a cost ratio): the rule of
  hours with an 'x' ('0.90x', '1.05x', '0.0042x'), a column of them at one precision
  (its caller's `places`: '0.896x' never beside '1.05x').
- What is left of a budget reads by the budget's rule (`given`): '$5.00 left' of a
  $5.00 budget alone, at the precision of the costs beside it in their line.
- An age, or how long ago (`age`): in the coarsest whole unit that still says it:
  seconds under a minute, minutes under an hour, hours under two days, days under 60
  days, months beyond ('45 s', '12 min', '5 h', '12 days', '4 mo'), wherever it is read.
- A span of time said beside what makes it (work lost at a pace: `duration`): in the
  unit an age takes, at two significant digits under ten of it and whole beyond ('3.4 s',
  '8.8 s', '40 min', '3.3 h'), never '0.1458 min' beside '3.4 s'.

'-' stands for an amount that does not apply (None, NaN, infinite).
- An amount the user types (`parse_usd`: a budget, a price cap): USD, as a number
  ('50', '12.50', '1,200'), with '$' or the code ('$50', '50 USD', 'USD 50'); another
  currency ('€5', '5 EUR') is refused as such, never read as dollars.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from decimal import ROUND_HALF_UP, Decimal
from typing import NamedTuple

MAX_DECIMALS = 4  # amounts read together, and prices per hour
FINEST = 6  # the most decimals figures read together take to add up (`finest`)
COMPARED_MOST = 8  # the most decimals two amounts compared in words take to differ
HOURS_MOST = 8  # the most decimals hours take to make a product add up
PRICE_MOST = 6  # the most decimals a price per hour takes in a product (`price_places`)
# A price charged on average (dollars over hours) off by no more than this part of it:
# the float error of the sums that made it, no digit ('$1.0060' for 1.005999999993; a
# second's charge integrated over months of a price is off by some billionths of it).
PRICE_NOISE = 1e-7
# A sum's rounding error, no amount (far above a float's error on sums of millions of
# dollars, far below a second's charge): a just-launched job's few milliseconds read
# '<$0.0001', as they do a moment later, not '$0.00'.
NOISE = 1e-8
SIGNIFICANT = 2  # digits an amount under a cent keeps
SMALL_USD = 0.10  # under a dime, a cost the user weighs keeps MAX_DECIMALS
# Significant digits a figure is read with before rounding: a float's last-digit error is none.
_DIGITS = 12


# An amount as typed: a unit before it or after it (a symbol or a three-letter code).
_TYPED = re.compile(r"\s*(?P<before>[a-z]{3}|us\$|[^\w\s.,+-])?\s*"
                    r"(?P<number>[-+]?(?:\d[\d,]*)?\.?\d+(?:e[-+]?\d+)?)"
                    r"\s*(?P<after>[a-z]{3}|[^\w\s.,+-])?\s*")
_USD_UNITS = {"usd", "$", "us$"}
USD_FORMS = "an amount of USD, such as 50 or '$50'"


def parse_usd(value: str | float) -> float:
    """An amount of USD as typed: 50, '12.50', '$1,200', '50 USD', 'USD 50'; ValueError
    naming it and the forms taken, or saying that only USD is taken ('€5', '5 EUR')."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    found = _TYPED.fullmatch(str(value).lower())
    if found is None:
        raise ValueError(f"{value!r}: expected {USD_FORMS}")
    units = {u for u in (found["before"], found["after"]) if u}
    if not units <= _USD_UNITS:
        raise ValueError(f"{value!r}: only USD is taken: expected {USD_FORMS}")
    return float(found["number"].replace(",", ""))


def no_noise(value: float) -> float:
    """An exact figure (JSON's) made by adding or taking away others (a saving, a
    difference, their totals): 0.0 under NOISE, a sum's rounding error (the same charges
    added up in another order), else as it is; NaN stays."""
    return 0.0 if _known(value) and abs(float(value)) < NOISE else value


def exact(value: float) -> float:
    """A figure as JSON writes it: the exact figure, read at _DIGITS significant digits
    (0.0034501999999999996, a float's last-digit error, is 0.0034502), a sum's rounding
    error zero (`no_noise`); NaN and what is no number stay."""
    if not _known(value) or isinstance(value, bool):
        return value
    return no_noise(float(f"{float(value):.{_DIGITS}g}"))


# Numbers JSON writes as money though their key names no dollars (by job; a budget's share).
MONEY_MAPS = ("spent_by_job",)
SHARES_OF_MONEY = ("used",)


def exact_money(document: object) -> object:
    """`document` (JSON's dicts and lists) with every amount of money in it `exact`: the
    numbers under a key that names dollars ('usd', '..._usd', 'usd_per_hour'), those of
    a map of amounts (MONEY_MAPS: a budget's spent by job) and a share of a budget
    (SHARES_OF_MONEY)."""
    if isinstance(document, dict):
        return {k: _exact_map(v) if k in MONEY_MAPS and isinstance(v, dict)
                else exact(v) if _money_key(k) and isinstance(v, (int, float))
                else exact_money(v) for k, v in document.items()}
    if isinstance(document, list):
        return [exact_money(v) for v in document]
    return document


def _exact_map(amounts: dict) -> dict:
    return {k: exact(v) if isinstance(v, (int, float)) else v for k, v in amounts.items()}


def _money_key(key: object) -> bool:
    return isinstance(key, str) and (key == "usd" or key.endswith("_usd")
                                     or key.startswith("usd_per") or key in SHARES_OF_MONEY)


def _known(value: float | None) -> bool:
    return value is not None and isinstance(value, (int, float)) and math.isfinite(value)


def decimals(values: Iterable[float | None], most: int = MAX_DECIMALS) -> int:
    """The decimals that show each of `values` with at least two significant digits under
    a cent (or hour), between 2 and `most`."""
    need = 2
    for value in values:
        if not _known(value) or abs(float(value)) < NOISE:
            continue
        size = float(f"{abs(float(value)):.{SIGNIFICANT}g}")  # as it will read
        if size < 0.01:
            need = max(need, -math.floor(math.log10(size)) + SIGNIFICANT - 1)
    return min(need, most)


def decimals_kept(values: Iterable[float | None]) -> int:
    """`decimals(values)`, or MAX_DECIMALS when one of them is under a dime (and not zero),
    where cents alone would lose a tenth of it or more."""
    small = any(_known(v) and NOISE <= abs(float(v)) < SMALL_USD for v in values)  # type: ignore[arg-type]
    return MAX_DECIMALS if small else decimals(values)


def half_up(value: float, places: int) -> Decimal:
    """`value` at `places` decimals, a half rounded away from zero, as a reader rounds
    ('0.000175' at 5 decimals: 0.00018, never 0.00017 for the binary float just below
    it): every figure is written so (`usd`, `hours`, `as_written`)."""
    return Decimal(f"{float(value):.{_DIGITS}g}").quantize(Decimal(1).scaleb(-places),
                                                          rounding=ROUND_HALF_UP)


def _figure(value: float, places: int, unit: str = "", zero: int = 2) -> str:
    size = abs(float(value)) if abs(float(value)) >= NOISE else 0.0
    if not size:  # zero reads at `zero` decimals (a charged figure's: `CHARGED`'s)
        return f"{unit}{0:.{zero}f}"
    shown = half_up(size, places)
    if shown == 0:  # smaller than the last decimal shown
        sign = "-" if value < 0 else ""  # a tiny loss is no saving: '-<$0.0001'
        return f"{sign}<{unit}{10 ** -places:.{places}f}"
    sign = "-" if value < 0 else ""
    return f"{sign}{unit}{shown:,.{places}f}"


def charging(value: float, live: bool = True) -> float:
    """`value` (hours or dollars) of what is charged still (`live`: open now), never zero:
    it reads '<$0.0001' from its first moment, never '$0.00'. Not `live`: as it is."""
    return max(float(value), NOISE) if live and _known(value) else value


def usd(value: float | None, places: int | None = None) -> str:
    """One amount: '$1,234.50', '$0.0049', zero '$0.00' (`places`: the decimals of the
    amounts it is read with, zero too: '$0.0000' beside '$0.0354')."""
    if not _known(value):
        return "-"
    if places is None:  # alone: zero is '$0.00'
        return _figure(float(value), decimals([value]), "$")  # type: ignore[arg-type]
    return _figure(float(value), places, "$", places)  # type: ignore[arg-type]


def usd_all(*values: float | None) -> list[str]:
    """Amounts read together, at one precision (see the module)."""
    places = decimals(values)
    return [usd(v, places) for v in values]


def derived_prices(values: Sequence[float | None], prices: Sequence[float | None]) -> list[str]:
    """A column of prices per GPU-hour, each dividing the stored price beside it in
    `prices`: at that column's precision (`column_places`), so that a one-GPU offering's
    reads as its price does."""
    places = column_places(prices)
    return [usd(v, places) for v in values]


def stored_price(value: float | None) -> str:
    """A stored price per hour, wherever it is shown: an offering's price as collected or
    bundled, one instance's or a gang's sum of them, the price a charge used (its average
    where it was charged at one price), a bill's rate recorded as a price. At its own
    decimals (`stored_places`: '$0.07962', '$0.796105', '$0.9180'), so that one price
    reads alike in every command, line and page; a figure of more digits than PRICE_MOST
    is no stored price (an average charged across prices) and reads at MAX_DECIMALS
    ('$0.2457'). A figure made by dividing one is `derived_per_hour`'s. The '/h' is the
    caller's."""
    return usd(value, stored_places(value))


def stored_places(value: float | None) -> int:
    """The decimals `stored_price` writes `value` at: its own (`price_places`) where it
    has at most PRICE_MOST, else (an average) MAX_DECIMALS."""
    if _known(value) and _writes(float(value), PRICE_MOST):  # type: ignore[arg-type]
        return price_places(float(value))  # type: ignore[arg-type]
    return MAX_DECIMALS


def column_places(prices: Iterable[float | None]) -> int:
    """The one precision of a column of stored prices (a table's `$/h`, `$/GPU-h`): the
    most decimals any of them takes (`stored_places`), so that each reads as it is and
    the column at one precision ('$0.159240' above '$0.361800', never '$0.15924' above
    '$0.3618'); MAX_DECIMALS where none is known."""
    return max((stored_places(p) for p in prices if _known(p)), default=MAX_DECIMALS)


def stored_prices(values: Sequence[float | None]) -> list[str]:
    """A column of stored prices, each at the column's one precision (`column_places`)."""
    places = column_places(values)
    return [usd(v, places) for v in values]


def derived_per_hour(value: float | None, price: float | None = None) -> str:
    """A figure per hour made by dividing, not a stored price: a cost per hour of assumed
    work (and the difference of two) at MAX_DECIMALS ('$0.0796'), as the clouds quote
    prices; a price per GPU-hour (`price`: the stored price it divides) at that price's
    decimals (`stored_places`), so that a one-GPU offering's reads as its price does
    ('$0.07962' beside '$0.07962/h'; '$0.00995' of $0.07962 for 8 GPUs). The '/h' is the
    caller's."""
    return usd(value, MAX_DECIMALS if price is None else stored_places(price))


def given(value: float | None, places: int | None = None) -> str:
    """A budget or a cap the user set, and what is left of it: alone (`places` None), as
    typed: '$2.00', '$2.50', '$0.005' (the fewest decimals, at least 2, that write it
    exactly; MAX_DECIMALS at most; one they do not write exactly, a cap less a spend of
    many digits, at its own). In a line or a row with other amounts, at their `places`
    ('$0.0060' beside '$0.0142'), or at the fewest that write it exactly where those are
    more (up to MAX_DECIMALS): a line or row reads at one precision."""
    if not _known(value):
        return "-"
    exact = next((p for p in range(2, MAX_DECIMALS + 1)
                  if abs(round(float(value), p) - float(value)) < NOISE), None)  # type: ignore[arg-type]
    if places is not None:
        return usd(value, max(places, exact or 0))
    return usd(value, max(decimals([value]), 2) if exact is None else exact)


def hours(value: float | None, places: int | None = None) -> str:
    """Hours: '1.04', '0.03', '0.0049' (the unit is the caller's)."""
    if not _known(value):
        return "-"
    return _figure(float(value), decimals([value]) if places is None else places)  # type: ignore[arg-type]


def hours_all(*values: float | None) -> list[str]:
    """Hours read together, at one precision."""
    places = decimals(values)
    return [hours(v, places) for v in values]


def ratio(value: float | None, places: int | None = None) -> str:
    """A ratio, by the rule of hours: '0.90x', '1.05x', '0.0042x', '12.50x' (`places`:
    the decimals of the column it stands in)."""
    return "-" if not _known(value) else hours(value, places) + "x"


class Scale(NamedTuple):
    """The precision of charged figures: the decimals of money (`usd`) and of hours
    (`hours`) every view writes them at (`CHARGED`)."""

    usd: int
    hours: int

    def places(self) -> dict[str, int]:
        """{"usd": ..., "hours": ...}: the precision of a table's charged figures."""
        return {"usd": self.usd, "hours": self.hours}


# Charged figures' precision, the same in every store, view and call: money at MAX_DECIMALS
# ('$0.0049', '$12.3400', '<$0.0001' below it), hours alike ('0.0617', '<0.0001'), so that
# a job's figures never change their decimals because another job settled a smaller charge.
CHARGED = Scale(MAX_DECIMALS, MAX_DECIMALS)


def charged_usd(value: float | None, places: int) -> str:
    """A charged figure at `places` decimals (`CHARGED.usd`): '$0.0092', '$0.0000', '<$0.0001'."""
    return "-" if not _known(value) else _figure(float(value), places, "$", places)  # type: ignore[arg-type]


def charged_hours(value: float | None, places: int) -> str:
    """Charged hours at `places` decimals (`CHARGED.hours`) ('0.0172', zero '0.0000')."""
    return "-" if not _known(value) else _figure(float(value), places, "", places)  # type: ignore[arg-type]


def total_as_written(parts: Iterable[float | None], places: int) -> float:
    """A charged total as the sum of its `parts` as written at `places` decimals
    (`sum_as_written`), so that it reads the same wherever it stands and its parts
    visibly add up to it; never zero where a part is charged (a just-launched
    placement's '<$0.0001' makes '<$0.0001'); NaN when no part is known."""
    known = [float(v) for v in parts if _known(v)]  # type: ignore[arg-type]
    total = sum_as_written(known, places)
    if total == 0 and any(abs(v) >= NOISE for v in known):
        return charging(math.fsum(known)) if math.fsum(known) > 0 else -NOISE
    return total


SECONDS_PER_MONTH = 30.44 * 86_400  # a mean month
# Each unit of `age` and the age in seconds from which the next one says it.
AGE_UNITS = ((1, "s", 60), (60, "min", 3600), (3600, "h", 48 * 3600),
             (86_400, "days", 60 * 86_400), (SECONDS_PER_MONTH, "mo", math.inf))


def age(seconds: float | None) -> str:
    """How old a thing is, or how long ago it was: '45 s', '12 min', '5 h', '12 days',
    '4 mo', in whole units (the exact time is the JSON's); '-' unknown; a time ahead 0 s."""
    if not _known(seconds):
        return "-"
    seconds = max(float(seconds), 0.0)  # type: ignore[arg-type]
    for size, unit, up_to in AGE_UNITS:
        count = math.floor(seconds / size + 0.5)  # half up: 2.5 h reads 3 h
        if count * size < up_to:  # as it reads: 59.7 s is 1 min, not '60 s'
            return f"{count:,} {unit}"
    return "-"  # (unreachable: months have no end)


def duration(seconds: float | None) -> str:
    """A span of time beside what makes it ('3.4 s', '8.8 s', '40 min', '3.3 h', '12
    days'): the unit `age` says it in (as it reads: 59.96 s is '1 min'), two significant
    digits under ten of it, whole from ten; '<0.001 s' under a millisecond; '-' unknown."""
    if not _known(seconds):
        return "-"
    seconds = max(float(seconds), 0.0)  # type: ignore[arg-type]
    if 0 < seconds < 0.001:
        return "<0.001 s"  # (never an exponent)
    for size, unit, up_to in AGE_UNITS:
        # (a span that rounds up to the next unit reads 1 of it: 59.97 s is '1 min')
        value = max(seconds / size, 1.0) if size > 1 else seconds
        shown = float(f"{value:.2g}") if value < 9.95 else float(math.floor(value + 0.5))
        if shown * size < up_to:
            return f"{shown:,.0f} {unit}" if shown == int(shown) else f"{shown:.2g} {unit}"
    return "-"  # (unreachable: months have no end)


def as_written(value: float, places: int) -> float:
    """`value` as its text at `places` decimals reads ('$0.0349' is 0.0349): the figure a
    reader adds up. An amount below the last decimal ('<$0.0001') reads as 0; NaN stays."""
    if not _known(value):
        return value
    return float(half_up(float(value), places)) if abs(float(value)) >= NOISE else 0.0


def difference_as_written(a: float, b: float, places: int) -> float:
    """`a - b` as a reader makes it from the two as written at `places` decimals (a saving
    beside its baseline `a` and the spend `b`): within a unit of the last decimal of the
    exact difference."""
    return round(as_written(a, places) - as_written(b, places), places)


def sum_as_written(values: Iterable[float | None], places: int) -> float:
    """The sum of `values` as written at `places` decimals (a total beside its cells;
    None and NaN left out, as '-' adds nothing); NaN when none is known."""
    known = [as_written(float(v), places) for v in values if _known(v)]  # type: ignore[arg-type]
    return round(math.fsum(known), places) if known else math.nan


def parts_as_written(total: float, parts: Sequence[float], places: int) -> list[float]:
    """`parts` of a `total` (as written at `places` decimals) as figures at `places`
    decimals that sum to it: each as it reads alone where they do so, else
    largest-remainder rounding. Each part is rounded down to the
    last decimal, then the units the sum misses go to the parts that lost the most (one
    each, or as many rounds as needed where the total as written is a sum of many cells
    rounded; taken back from those that lost the least where it is less). A part so reads
    within one unit of the last decimal of its exact value (a few units at most where the
    total is the sum of many cells); nothing is charged differently."""
    scale = 10 ** places
    want = round(as_written(total, places) * scale)
    if not parts or not _known(total) or not all(_known(p) for p in parts) or \
            adds_up_alone(total, parts, places):  # each as it reads alone
        return [as_written(p, places) for p in parts]
    floors = [math.floor(p * scale + 1e-9) for p in parts]
    missing = want - sum(floors)
    lost = sorted(range(len(parts)), key=lambda i: parts[i] * scale - floors[i],
                  reverse=True)
    step = 1 if missing > 0 else -1
    order = lost if missing > 0 else lost[::-1]
    while missing:
        for i in order:
            if not missing:
                break
            floors[i] += step
            missing -= step
    return [round(units / scale, places) if units or abs(p) < NOISE else 0.0
            for units, p in zip(floors, parts, strict=True)]


def price_places(usd_per_hour: float) -> int:
    """The decimals a price per hour is written at where hours are multiplied by it: its
    own (to within PRICE_NOISE: '$1.0060' for 1.005999999993), MAX_DECIMALS at least,
    PRICE_MOST at most: '$0.07962', never '$0.0796' for the price a charge used."""
    if not _known(usd_per_hour):
        return MAX_DECIMALS
    return next((p for p in range(MAX_DECIMALS, PRICE_MOST)
                 if _writes(float(usd_per_hour), p)), PRICE_MOST)


def _writes(price: float, places: int) -> bool:
    """Whether `price` (per hour) at `places` decimals is the price itself (`PRICE_NOISE`)."""
    return abs(float(half_up(price, places)) - price) <= abs(price) * PRICE_NOISE


def steady_hours(usd_per_hour: float, places: int, least: int = 2) -> int:
    """The decimals from `least` (`CHARGED.hours`) at which a unit of the hours'
    last decimal moves their product with the price by no more than a unit of the
    amount's last (`places`): a product then reads as the amount at them (`times`), so
    that a figure that grows (a running placement's hours) keeps its decimals from call
    to call; HOURS_MOST at most."""
    if not _known(usd_per_hour) or float(usd_per_hour) <= 0:
        return least
    price = abs(float(usd_per_hour))
    digits = least
    while digits < HOURS_MOST and price * 10 ** -digits > 10 ** -places * (1 + 1e-9):
        digits += 1
    return digits


def times(span: float, usd_per_hour: float, amount: float | None = None,
          places: int | None = None, least: int | None = None
          ) -> tuple[str, str, str] | None:
    """(hours, price, amount) as written such that the hours times the price, as written,
    read as the amount does: the price at its own decimals (`price_places`), the hours at
    the fewest decimals from `least` (by default their own) up to HOURS_MOST at which they
    do, each rounded as it reads or, at decimals where a unit of the hours moves the
    product by no more than a unit of the amount (`steady_hours`), a unit either way
    (the amount's own rounding, as where it falls on the half of its last decimal).
    None where no hours do (a price of more digits than PRICE_MOST: an average): the
    caller then writes no product."""
    if amount is None:
        amount = span * usd_per_hour
    if not (_known(span) and _known(usd_per_hour) and _known(amount)):
        return None
    money = usd(amount, places)
    rate_places = price_places(usd_per_hour)
    price = as_written(float(usd_per_hour), rate_places)
    shown = decimals([amount]) if places is None else places
    first = decimals([span]) if least is None else least
    fine = steady_hours(float(price), shown)  # a unit there moves no more than the amount's
    for digits in range(first, HOURS_MOST + 1):
        near = half_up(float(span), digits)
        unit = Decimal(1).scaleb(-digits)
        for figure in (near, near - unit, near + unit) if digits >= fine else (near,):
            if figure >= 0 and usd(float(figure) * price, shown) == money:
                return (_figure(float(figure), digits, "", digits),
                        usd(usd_per_hour, rate_places), money)
    return None


def placement_times(span: float, usd_per_hour: float, amount: float, places: int,
                    least: int, live: bool = False) -> tuple[str, str, str] | None:
    """A placement's billed hours x its price = its amount, as every view writes it:
    `times` from the fewest decimals from `least` (`CHARGED.hours`) at which its hours
    as they read make its amount (`product_hours`: 0.036 h x $0.9180/h = $0.03, never
    0.03 h for 0.0356 h), or while it runs from the decimals at which a product reads as
    the amount whatever its hours (`steady_hours`), call after call."""
    return times(span, usd_per_hour, amount, places,
                 steady_hours(usd_per_hour, places, least) if live else
                 product_hours([([span], [amount])], places, least))


def block_hours(lines: Iterable[tuple[float, float, float, bool]], places: int, least: int) -> int:
    """One `least` for `placement_times` of a job's placements read together ((hours, price,
    amount, running) each): ended ones' `product_hours` together, running ones' steady."""
    found = list(lines)
    return max([product_hours([([h], [a]) for h, _, a, on in found if not on], places, least),
                *(steady_hours(p, places, least) for _, p, _, on in found if on)])


def placement_hours(span: float, amount: float, places: int, least: int,
                    live: bool = False) -> float:
    """A placement's (or a part of one's) hours as `placement_times` writes them, at its
    price (its `amount` over its hours), as a number: the figure a row made of it adds
    up; `span` itself where no product is written (no price, an average of many digits,
    a charge under the last decimal)."""
    if not (_known(span) and _known(amount)) or span < NOISE or abs(amount) < NOISE:
        return span
    found = placement_times(span, amount / span, amount, places, least, live)
    return span if found is None or "<" in found[2] else float(found[0].replace(",", ""))


def hours_times(span: float, usd_per_hour: float, amount: float | None = None,
                places: int | None = None, least: int | None = None
                ) -> tuple[str, str, str]:
    """A line's hours x price = amount as written: ('0.0142', '$0.1809', '$0.0026'), by
    `times` (0.01 h x $0.1809/h reads $0.0018, not $0.0026); where no hours make the
    amount, the hours at their own decimals (or `least`) and the price at its own.
    `amount`: the product (or what was charged for it), `places`: its decimals (its own
    by default). A line that must never state a false product asks `times`."""
    found = times(span, usd_per_hour, amount, places, least)
    if found is not None:
        return found
    if amount is None:
        amount = span * usd_per_hour
    shown = decimals([span]) if least is None else least
    return (hours(span, shown), usd(usd_per_hour, price_places(usd_per_hour)),
            usd(amount, places))


def product_hours(charges: Iterable[tuple[Sequence[float], Sequence[float]]],
                  places: int, least: int) -> int:
    """The decimals, the fewest from `least` (`CHARGED.hours`) up to HOURS_MOST,
    at which each of `charges` (the hours and the amounts a figure is made of, each
    written as the sum of its parts as written: `total_as_written`) reads so that its
    hours times its price, as written (`price_places`), make its amount as written at
    `places`: 0.036 h beside $0.03 at $0.9180/h, never 0.04 h. A figure of more than one
    price (its amounts over its hours not one price of at most PRICE_MOST decimals: an
    average) states no product and sets nothing."""
    found = []
    for spans, amounts in charges:
        spans, amounts = list(spans), list(amounts)
        prices = {a / h for h, a in zip(spans, amounts, strict=True) if _known(a)
                  and _known(h) and h >= NOISE and abs(a) >= NOISE}
        if not prices or max(prices) - min(prices) > PRICE_NOISE * max(prices):
            continue
        if not _writes(max(prices), PRICE_MOST):
            continue  # an average: no product reads as its amount
        price = half_up(max(prices), price_places(max(prices)))  # as `times` writes it
        found.append((spans, usd(total_as_written(amounts, places), places), price))
    for digits in range(least, HOURS_MOST + 1):
        if all(usd(float(half_up(total_as_written(spans, digits), digits) * price), places)
               == money for spans, money, price in found):
            return digits
    return max(least, HOURS_MOST)


def finest(values: Iterable[float | None]) -> int:
    """The most decimals figures read together take to add up each as written alone
    (`adding_up`): FINEST where one is under a cent (and not zero), else MAX_DECIMALS."""
    small = any(_known(v) and NOISE <= abs(float(v)) < 0.01 for v in values)  # type: ignore[arg-type]
    return FINEST if small else MAX_DECIMALS


def adds_up_alone(total: float, parts: Sequence[float], places: int) -> bool:
    """Whether `parts`, each written alone at `places` decimals, sum to `total` written
    alone (parts or a total not known: nothing to add up)."""
    if not parts or not _known(total) or not all(_known(p) for p in parts):
        return True
    return sum_as_written(parts, places) == round(as_written(total, places), places)


def adding_up(sums: Iterable[tuple[float, Sequence[float]]], least: int = 2,
              most: int | None = None) -> int | None:
    """The fewest decimals, from `least` to `most` (by default `finest` of every figure),
    at which each of `sums` (a total and the parts it is made of) adds up with every
    figure written alone (`adds_up_alone`): a part then reads as it does alone, whatever
    it stands beside. None where none does: the caller then makes the parts add up
    (`parts_as_written`)."""
    groups = [(t, list(parts)) for t, parts in sums]
    if most is None:
        most = finest([v for t, parts in groups for v in (t, *parts)])
    for places in range(least, max(least, most) + 1):
        if all(adds_up_alone(t, parts, places) for t, parts in groups):
            return places
    return None


def apart(a: float | Sequence[float], b: float, least: int | None = None) -> int:
    """The decimals at which amount `a` (or amounts `a`, summed as a reader sums them as
    written) and amount `b`, compared in words ('more than the ... left', 'would pass the
    budget of'), read in the order they stand in: the fewest from `least` (by default
    those they need together, `decimals`) at which they do, COMPARED_MOST at most. Never
    '$0.0003, more than the $0.0003 left': '$0.00032, more than the $0.00028 left'."""
    parts = [float(a)] if isinstance(a, (int, float)) else [float(v) for v in a]
    places = decimals([*parts, b]) if least is None else least
    if not (_known(b) and all(_known(v) for v in parts)):
        return places
    exact = math.fsum(parts)
    # (equal but for a float's last bits, e.g. a spend summed from charges: they read alike)
    order = 0 if math.isclose(exact, b, rel_tol=1e-9, abs_tol=1e-12) else (exact > b) - (exact < b)
    while places < COMPARED_MOST:
        shown, other = sum_as_written(parts, places), as_written(float(b), places)
        if (shown > other) - (shown < other) == order:
            break
        places += 1
    return places
