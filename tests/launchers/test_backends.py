"""The launchers' registry: a backend named by a typo is refused with the one meant."""

from __future__ import annotations

import pytest

from costsched.model import InvalidInput
from launchers import make_launcher


def test_a_misspelt_launcher_is_refused_with_the_one_meant() -> None:
    with pytest.raises(InvalidInput) as info:
        make_launcher("locl")
    assert str(info.value) == ("launcher 'locl': expected one of local, aws, gcp, azure, "
                               "clouds; did you mean 'local'?")
