"""The objectives a plan takes, by name, importable without the planner (so that a
command refuses a misspelt one before anything heavy loads)."""

from __future__ import annotations

PER_JOB = ("cost", "time", "tradeoff")  # costsched.optimize.rank's
COLLECTION = ("cost", "time", "throughput-per-dollar")  # costsched.optimize.collection's
ALL = (*PER_JOB, *(o for o in COLLECTION if o not in PER_JOB))
