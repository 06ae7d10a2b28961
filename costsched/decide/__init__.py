"""The deciders' pure core: a running job's next placement from a market given as frames and
arrays, with no store.

Below both the service (which builds the market from the store, `service.jobs.decider`) and
the backtests (which build it from a replayed trace): a live job and a replay of the same
prices are decided by the same functions, so what a backtest measures is what a running job
does. `price`: the price-driven core (a `costsched.policies` policy, its move carried out
only when it pays); `deadline`: the deadline core (a `costsched.policies.deadline` policy
and the rule that a live job is never left without an instance).
"""

from costsched.decide.deadline import next_placements
from costsched.decide.price import Decision, carried_out, choose, move_of, pays, period_cost

__all__ = ["Decision", "carried_out", "choose", "move_of", "next_placements", "pays",
           "period_cost"]
