"""Moving jobs: the persisted state machine of launches, migrations and recoveries
(`machine`), and the port through which it drives the launchers (`launcher`)."""
