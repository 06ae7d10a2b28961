"""`python -m costsched.cli`: the `costsched` command."""

from costsched.cli import main

main()
