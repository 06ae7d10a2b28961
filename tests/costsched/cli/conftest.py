"""`costsched collect` is tested against the collectors' fakes, `launch` on Azure against
the loopback Azure: their fixtures, shared. The commands run in the test's process see
pandas as the `costsched` command has it."""

import sys
from collections.abc import Iterator

import pytest

from tests.launchers.conftest import azure, azure_tls  # noqa: F401 - fixtures by name
from tests.price_collectors.conftest import (  # noqa: F401 - fixtures by name
    azure_prices,
    hermetic_aws,
    loopback,
    recorded_spot,
)


@pytest.fixture(autouse=True)
def command_pandas() -> Iterator[None]:
    """The `costsched` command's pandas keeps its strings in Python objects, not pyarrow's
    (costsched.lazy.arrowless_pandas, installed before pandas is imported). The suite's
    process imported pandas with pyarrow's strings for the Python API's tests: here its
    strings are made as the command's are."""
    pandas = sys.modules.get("pandas")
    if pandas is None:  # not loaded yet: the command's import installs its own
        yield
        return
    with pandas.option_context("mode.string_storage", "python"):
        yield
