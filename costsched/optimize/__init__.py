"""The optimizer: pure functions over arrays and frames (no I/O).

- `rank`: per job, every offering's expected hours and cost, ranked by an objective;
- `risk`: spot preemption: expected time and cost with checkpoints and restarts;
- `availability`: preemption rates measured from probe logs;
- `collection`: a sweep of jobs placed at once (cvxpy + HiGHS), one policy per module;
- `planner`: the glue from job specs and a price frame to both.
"""
