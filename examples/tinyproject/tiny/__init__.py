"""The project's own package: it travels with the job's code."""
