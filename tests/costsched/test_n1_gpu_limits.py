"""GCP's N1 GPU limits, read once from the bundled file: which GPU counts an N1 machine of
so many vCPUs and GB takes, and the words for a pair over them."""

from __future__ import annotations

from costsched.n1_gpu_limits import limits, over_limit


def test_the_limits_cover_the_gpus_gcp_attaches_to_n1_at_each_count() -> None:
    assert sorted(limits()) == [("P100", 1), ("P100", 2), ("P100", 4), ("P4", 1), ("P4", 2),
                                ("P4", 4), ("T4", 1), ("T4", 2), ("T4", 4), ("V100", 1),
                                ("V100", 2), ("V100", 4), ("V100", 8)]
    v100 = limits()[("V100", 1)]
    assert (v100.max_vcpus, v100.max_memory_gb) == (12, 78)
    assert v100.takes(8, 52) and not v100.takes(16, 60) and not v100.takes(8, 79)


def test_only_an_n1_pair_over_a_limit_gets_words() -> None:
    assert over_limit("n1-standard-8", 8, 30, [("T4", 1)]) == ""
    assert over_limit("g2-standard-96", 96, 384, [("T4", 1)]) == ""  # not an N1 type
    assert over_limit("n1-highmem-16", 16, 104, [("V100", 1), ("T4", 1)]) == (
        "GCP attaches V100:1 to N1 machine types of at most 12 vCPUs and 78 GB, and "
        "n1-highmem-16 has 16 vCPUs and 104 GB")
