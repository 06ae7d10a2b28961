"""`costsched dashboard`: a local web UI over the store: jobs, spend and prices, updated
live, with a JSON API under /api/ in the CLI's `--json` shapes. Needs the `dashboard`
extra (Starlette, Jinja2, uvicorn)."""
