"""The optimizer: pure functions over arrays and frames (no I/O).

- `rank`: per job, every offering's expected hours and cost, ranked by an objective;
- `decision`: the decision model: expected time and cost of a job's remaining steps on an
  offering (spot preemption, checkpoints, restarts) and the cost of a move;
- `availability`: preemption rates measured from probe logs;
- `collection`: a sweep of jobs placed at once (cvxpy + HiGHS), one policy per module;
- `job`: a job as the optimizer reads it (`Workload`; the job spec's `ResolvedJob` is one);
- `planner`: the glue from jobs and a price frame to both.
"""
