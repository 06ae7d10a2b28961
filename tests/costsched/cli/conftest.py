"""`costsched collect` is tested against the collectors' fakes: their fixtures, shared."""

from tests.price_collectors.conftest import (  # noqa: F401 - fixtures by name
    azure_prices,
    hermetic_aws,
    loopback,
    recorded_spot,
)
