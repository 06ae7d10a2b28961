"""`costsched collect` is tested against the collectors' fakes, `launch` on Azure against
the loopback Azure: their fixtures, shared."""

from tests.launchers.conftest import azure, azure_tls  # noqa: F401 - fixtures by name
from tests.price_collectors.conftest import (  # noqa: F401 - fixtures by name
    azure_prices,
    hermetic_aws,
    loopback,
    recorded_spot,
)
