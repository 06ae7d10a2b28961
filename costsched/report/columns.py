"""The columns of the report's spend tables, in their order (its rows, frames and JSON)."""

# billed_hours: the placements' hours, as the clouds bill them (the estimates' training_hours
# leave setup, restarts and idle time out)
JOB_COLUMNS = ["job_id", "name", "state", "nodes", "billed_hours", "compute_usd", "egress_usd",
               "usd", "on_demand_usd", "saved_vs_on_demand_usd", "launch_choice_usd",
               "saved_vs_launch_choice_usd"]
CLOUD_COLUMNS = ["cloud", "billed_hours", "compute_usd", "egress_usd", "usd"]
DAY_COLUMNS = ["day", "job_id", "name", "cloud", "billed_hours", "compute_usd", "egress_usd",
               "usd"]
# move_id and kind: the move that copied the checkpoint, as the moves table names it (no
# id where no move was recorded for it: its kind then is its placement's reason)
EGRESS_COLUMNS = ["move_id", "job_id", "name", "kind", "at", "from_cloud", "from_region",
                  "to_cloud", "to_region", "gb", "usd_per_gb", "usd", "gb_source"]
BUDGET_COLUMNS = ["job_id", "name", "budget_usd", "spent_usd", "used", "status"]
