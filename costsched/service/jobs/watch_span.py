"""How long the budget watch charges ahead for its next interval: its configured interval
(`daemon.watch_seconds`), or as long as the watching daemon's last two passes were apart
when that was longer (a slow pass, on a busy machine, makes the next one as late), in whole
seconds rounded up. One figure for the watch's own check (`caps.enforce`), a launch's and
a start's budget check and the hint that says what starts a stopped job again, so that a
job they let start is not stopped at the next pass. A daemon records every pass, idle ones
too (`DaemonRow.pass_every`): a job launched after a quiet spell is charged the interval,
not the quiet spell."""

from __future__ import annotations

import math
from datetime import datetime

from costsched.store import PriceStore

# A daemon's passes are stored to the whole second: a pass one second late is on time.
LATE_SECONDS = 1.0


def charged_seconds(configured: float, apart: float | None) -> float:
    """The seconds charged ahead: `apart` (between the last two passes) when it is later
    than `configured` by more than `LATE_SECONDS`, else `configured`; rounded up."""
    slow = apart is not None and apart > configured + LATE_SECONDS
    return float(math.ceil(apart if slow else configured))  # type: ignore[arg-type]


def watch_span(store: PriceStore, configured: float, at: datetime) -> float:
    """What the watch of `store` charges ahead at its next pass, as its daemons' last
    passes say (`charged_seconds`); `configured` where no daemon has passed twice."""
    spans = [r.pass_every for r in store.daemons.running(at)
             if r.watch_seconds > 0 and r.pass_every is not None]
    return charged_seconds(configured, max(spans, default=None))


WATCHER_LATE = 3  # intervals after which a watcher's silence lets a look judge the caps
LATE_GRACE_SECONDS = 60.0


def watched(store: PriceStore, at: datetime) -> bool:
    """Whether a daemon watches the store's running jobs at `at`: one running with a watch
    interval whose last pass (or start) is at most `WATCHER_LATE` intervals and
    `LATE_GRACE_SECONDS` old. It judges their budget caps, by its own settings; a look at
    the jobs from a shell (`status`) leaves them to it, and judges them itself where the
    watcher is late (hung, or its passes far slower than its interval)."""
    return any(r.watch_seconds > 0 and (at - (r.pass_at or r.started_at)).total_seconds()
               <= WATCHER_LATE * r.watch_seconds + LATE_GRACE_SECONDS
               for r in store.daemons.running(at))

