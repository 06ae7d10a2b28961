"""A placement score is a whole number from 1 to 10 for a region that exists: true, 9.5,
"7" or 11 refuse the document in one line naming the answer, the field and what is
accepted; nothing is stored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from costsched.model import InvalidInput
from costsched.service.signals import import_signals
from costsched.store import PriceStore


@pytest.mark.parametrize(("item", "says"), [
    ({"Region": "us-east-1", "Score": True}, "field Score True: expected a whole number"),
    ({"Region": "us-east-1", "Score": 9.5}, "field Score 9.5: expected a whole number"),
    ({"Region": "us-east-1", "Score": "7"}, "field Score '7': expected a whole number"),
    ({"Region": "us-east-1", "Score": 11}, "from 1 to 10"),
    ({"Region": "us-east-1", "Score": 0}, "from 1 to 10"),
    ({"Region": "us-moon-1", "Score": 5}, "field Region: region 'us-moon-1': not a region"),
    ({"Score": 5}, "field Region: region None"),
    ("5", "expected {Region, Score}"),
])
def test_a_score_out_of_its_range_refuses_the_document(tmp_path: Path, item: object,
                                                       says: str) -> None:
    path = tmp_path / "scores.json"
    good = {"Region": "us-west-2", "Score": 7}
    path.write_text(json.dumps({"InstanceType": "p3.2xlarge",
                                "SpotPlacementScores": [good, item]}))
    store = PriceStore(str(tmp_path / "store.sqlite"))
    try:
        with pytest.raises(InvalidInput) as err:
            import_signals(store, path, "placement")
        assert f"{path}: answer 0: SpotPlacementScores[1]: " in str(err.value)
        assert says in str(err.value) and "\n" not in str(err.value)
        assert store.signals.history().empty
        path.write_text(json.dumps({"InstanceType": "p3.2xlarge",
                                    "SpotPlacementScores": [good]}))
        assert import_signals(store, path, "placement") == (1, 1)
    finally:
        store.dispose()
