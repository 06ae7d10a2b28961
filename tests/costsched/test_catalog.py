"""The one GPU-name normalizer: catalog names in any case, clouds' and vendors' names."""

from __future__ import annotations

import pytest

from costsched import catalog, clouds
from costsched.model import InvalidInput


@pytest.mark.parametrize("model", catalog.GPU_MODELS)
def test_catalog_names_in_any_case(model: str) -> None:
    assert catalog.gpu_model_name(model) == model
    assert catalog.gpu_model_name(f" {model.lower()} ") == model


def test_every_clouds_accelerator_names() -> None:
    names = [(c, m, n) for c in clouds.CLOUDS.values() for m, n in c.accelerators.items()]
    assert names, "some cloud has accelerator names of its own"
    for cloud, model, name in names:
        assert catalog.gpu_model_name(name) == model, cloud.name
        assert catalog.gpu_model_name(name.upper()) == model, cloud.name


@pytest.mark.parametrize(("spelling", "model"), [
    ("nvidia-tesla-v100", "V100"),
    ("NVIDIA Tesla V100", "V100"),
    ("tesla-v100", "V100"),
    ("Tesla V100", "V100"),
    ("nvidia_t4", "T4"),
    ("NVIDIA A100 80GB", "A100-80GB"),
    ("nvidia-h100-80gb", "H100"),  # GCP's accelerator name of the catalog's H100
    ("k80", "K80"),  # as the dispa2020 AWS probe logs spell it
])
def test_vendor_spellings(spelling: str, model: str) -> None:
    assert catalog.gpu_model_name(spelling) == model


@pytest.mark.parametrize("value", ["TPU", "", "nvidia", "teslav100", "V100x2", "amd-mi300"])
def test_an_unknown_name_is_one_line_naming_the_models(value: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        catalog.gpu_model_name(value)
    message = str(caught.value)
    assert message.startswith(f"unknown GPU model {value!r}: expected one of ")
    assert "\n" not in message
    assert all(model in message for model in catalog.GPU_MODELS)


def test_retired_mask_marks_a_type_from_its_retirement_day_on_its_cloud_only() -> None:
    import pandas as pd

    from costsched import catalog

    frame = pd.DataFrame({"cloud": ["azure", "azure", "aws", "azure"],
                          "instance_type": ["Standard_NC6", "Standard_NC6", "Standard_NC6",
                                            "Standard_NC6s_v3"]},
                         index=[10, 11, 12, 13])
    day = pd.Timestamp("2023-09-06", tz="UTC")
    assert catalog.retired_mask(frame, day - pd.Timedelta(seconds=1)).tolist() == [False] * 4
    on = catalog.retired_mask(frame, day)
    assert on.tolist() == [True, True, False, False] and list(on.index) == [10, 11, 12, 13]
    assert catalog.retired_mask(frame.iloc[:0], day).empty
