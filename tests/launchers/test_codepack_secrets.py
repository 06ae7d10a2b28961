"""Every task file in a workdir, the job's own and the others beside it, is packed without
the secrets' values it writes: each is null, every other byte as written; a file that holds
a value elsewhere too is left out. Files that write no value, or do not read as YAML, are
packed as they are."""

from __future__ import annotations

import logging
import tarfile
from pathlib import Path

import pytest

from launchers.codepack import pack
from launchers.codepack_secrets import blanked

SKY = """\
name: km   # a task
workdir: .
secrets:
  KM_TOKEN: inline-SECRET-4242
  "QUOTED": 'km two 2'
  LATER:
  EMPTY: ~
  NUMBER: 12345678
  BLOCK: |
    line-one-secret
    line-two-secret

  FLOW: {a: b}
envs: {KM_TOKEN_HINT: not-secret}
run: python train.py
"""
SKY_BLANKED = """\
name: km   # a task
workdir: .
secrets:
  KM_TOKEN: null
  "QUOTED": null
  LATER:
  EMPTY: ~
  NUMBER: null
  BLOCK: null

  FLOW: {a: b}
envs: {KM_TOKEN_HINT: not-secret}
run: python train.py
"""


def test_each_written_value_is_null_and_every_other_byte_stays() -> None:
    assert blanked(SKY) == SKY_BLANKED
    flow = "secrets: {A: v-1, B: null}\r\nrun: x\r\n"
    assert blanked(flow) == "secrets: {A: null, B: null}\r\nrun: x\r\n"
    own = ("name: a\ntask:\n  secrets: [A]\n  written_secrets: {A: own-1}\n---\n"
           "name: b\ntask: {written_secrets: {B: \"own 2\"}}\n")
    assert blanked(own) == ("name: a\ntask:\n  secrets: [A]\n  written_secrets: {A: null}\n"
                            "---\nname: b\ntask: {written_secrets: {B: null}}\n")
    assert blanked("name: x\nrun: y\n") == "name: x\nrun: y\n"


def _archived(tmp_path: Path, project: Path, **kw: object) -> dict[str, bytes]:
    packed = pack(project, tmp_path / "out", **kw)  # type: ignore[arg-type]
    with tarfile.open(packed.path) as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "proj"
    folder.mkdir()
    (folder / "train.py").write_text("print('train')\n")
    (folder / "task.yaml").write_text(SKY)
    (folder / "other.yaml").write_text(SKY)  # not the job's file: the user's own
    return folder


def test_the_job_file_in_the_workdir_is_packed_blanked(tmp_path: Path, project: Path) -> None:
    files = _archived(tmp_path, project, job_file=project / "task.yaml",
                      written=["inline-SECRET-4242", "km two 2"])
    assert files["task.yaml"] == SKY_BLANKED.encode()
    assert files["train.py"] == b"print('train')\n"
    assert files["other.yaml"] == SKY_BLANKED.encode()  # another task's: the same
    # Named by another path to the same file (as the launch was given it): the same.
    (tmp_path / "link").symlink_to(project)
    again = _archived(tmp_path, project, job_file=tmp_path / "link" / "task.yaml",
                      written=["inline-SECRET-4242"])
    assert again["task.yaml"] == SKY_BLANKED.encode()


def test_without_written_values_or_outside_the_workdir_the_pack_is_as_before(
        tmp_path: Path, project: Path) -> None:
    before = pack(project, tmp_path / "a")
    assert pack(project, tmp_path / "b", job_file=project / "task.yaml").sha256 == \
        before.sha256
    outside = tmp_path / "task.yaml"
    outside.write_text(SKY)
    assert pack(project, tmp_path / "c", job_file=outside,
                written=["inline-SECRET-4242"]).sha256 == before.sha256


def test_a_job_file_holding_a_value_elsewhere_is_left_out(
        tmp_path: Path, project: Path, caplog: pytest.LogCaptureFixture) -> None:
    (project / "task.yaml").write_text(SKY + "# token was inline-SECRET-4242\n")
    with caplog.at_level(logging.WARNING, logger="costsched.codepack"):
        files = _archived(tmp_path, project, job_file=project / "task.yaml",
                          written=["inline-SECRET-4242"])
    assert "task.yaml" not in files and "train.py" in files
    assert ("task.yaml left out of the job's code: a secret's value it writes is elsewhere "
            "in it too (a comment, a command), and would be stored with the code") \
        in caplog.text
    assert "inline-SECRET-4242" not in caplog.text
    # Changed since it was read, so that it no longer reads as YAML: left out as well.
    (project / "task.yaml").write_text("secrets: {KM_TOKEN: inline-SECRET-4242\n")
    with caplog.at_level(logging.WARNING, logger="costsched.codepack"):
        files = _archived(tmp_path, project, job_file=project / "task.yaml",
                          written=["inline-SECRET-4242"])
    assert "task.yaml" not in files
    assert "task.yaml left out of the job's code (it no longer reads as YAML)" in caplog.text
    assert "inline-SECRET-4242" not in caplog.text


PROD = "# the production task\nsecrets:\n  HF_TOKEN: hf_literalProd99  # prod's\nrun: x\n"


def test_every_task_file_in_the_workdir_is_packed_blanked(
        tmp_path: Path, project: Path, caplog: pytest.LogCaptureFixture) -> None:
    (project / "sky-prod.yaml").write_text(PROD)
    (project / "deploy").mkdir()
    own = "name: d\ntask:\n  secrets: [A]\n  written_secrets: {A: own-Value-7}\n"
    (project / "deploy" / "job.yml").write_text(own)
    as_they_are = {
        "plain.yaml": b"name: p\nrun: python train.py\n",  # no secrets at all
        "names.yaml": b"secrets:\n  A:\n  B: null\ntask: {secrets: [A]}\n",  # names only
        "broken.yaml": b"secrets: {A: hf_broken\n  - [\n",  # not YAML: not a task file
        "latin.yaml": b"secrets: {A: caf\xe9}\n",  # not UTF-8: not a task file
        "notes.txt": b"secrets: {A: hf_in_notes}\n",  # not a YAML file
        "data.json": b'{"secrets": {"A": "v"}}',
    }
    for name, data in as_they_are.items():
        (project / name).write_bytes(data)
    (project / "leaky.yaml").write_text("secrets: {A: hf_leak1}\nrun: echo hf_leak1\n")
    with caplog.at_level(logging.WARNING, logger="costsched.codepack"):
        files = _archived(tmp_path, project, job_file=project / "task.yaml",
                          written=["inline-SECRET-4242", "km two 2"])
    assert files["task.yaml"] == SKY_BLANKED.encode()
    assert files["sky-prod.yaml"] == PROD.replace("hf_literalProd99", "null").encode()
    assert files["deploy/job.yml"] == own.replace("own-Value-7", "null").encode()
    for name, data in as_they_are.items():
        assert files[name] == data, name
    # Its value is in its run command too: left out, said without the value.
    assert "leaky.yaml" not in files
    assert "leaky.yaml left out of the job's code: a secret's value it writes is elsewhere" \
        in caplog.text
    assert "hf_leak1" not in caplog.text
    # With no job file named, or none writing a value: the other files the same.
    alone = _archived(tmp_path, project)
    assert alone["sky-prod.yaml"] == files["sky-prod.yaml"]
    assert alone["task.yaml"] == SKY_BLANKED.encode()


# A SkyPilot task usually writes its secrets under envs: each env named like a secret (the
# one rule by which costsched masks what it prints: `redact.is_secret_name`) is null too.
ENVS = """\
name: km2
workdir: .
envs:
  KM_STEPS: 2000
  WANDB_API_KEY: sk-SUPERSECRET-4242abcd   # from the W&B page
  HF_TOKEN:
  DB_PASSWORD: ''
  MAX_TOKEN: 512
  KM_TOKEN_HINT: not-secret
run: python kmeans.py --max-len 512
"""
ENVS_BLANKED = ENVS.replace("sk-SUPERSECRET-4242abcd", "null").replace(
    "MAX_TOKEN: 512", "MAX_TOKEN: null")


def test_an_env_named_like_a_secret_is_null_as_a_secret_is() -> None:
    # (512 is in the run command too: a value shorter than a secret is masked from is no
    # reason to leave the file out; it is null where the env writes it.)
    assert blanked(ENVS) == ENVS_BLANKED
    flow = "envs: {WANDB_API_KEY: sk-x-1234, LR: 0.1}\nsecrets: {B: v-5678}\n"
    assert blanked(flow) == "envs: {WANDB_API_KEY: null, LR: 0.1}\nsecrets: {B: null}\n"
    native = "name: j\nenvs: {API_KEY: abcd-1234, STEPS: 10}\nrun: x\n"
    assert blanked(native) == "name: j\nenvs: {API_KEY: null, STEPS: 10}\nrun: x\n"


@pytest.mark.parametrize("name", ["WANDB_API_KEY", "HF_TOKEN", "AUTH", "db_password",
                                  "SESSION", "KM_STEPS", "TOKENIZER", "KEYS_DIR", "LR"])
def test_which_envs_are_null_is_the_rule_by_which_costsched_masks(name: str) -> None:
    from costsched.redact import is_secret_name

    text = f"envs:\n  {name}: v-12345678\n"
    assert (blanked(text) == f"envs:\n  {name}: null\n") is is_secret_name(name)
    assert (blanked(text) == text) is not is_secret_name(name)


def test_a_sibling_task_file_packed_with_any_job_has_its_secret_envs_null(
        tmp_path: Path, project: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The job launched writes no env (a costsched job file): the task beside it is packed
    without the value all the same, and one holding it elsewhere too is left out."""
    (project / "budget.yaml").write_text("name: b\nworkdir: .\nrun: python train.py\n")
    (project / "sky2.yaml").write_text(ENVS)
    (project / "leaky.yml").write_text("envs: {HF_TOKEN: hf_leak-99}\n"
                                       "run: echo hf_leak-99\n")
    (project / "plain.yaml").write_text("envs: {LR: 0.1, KM_TOKEN_HINT: x-12345}\n")
    with caplog.at_level(logging.WARNING, logger="costsched.codepack"):
        files = _archived(tmp_path, project, job_file=project / "budget.yaml")
    assert files["sky2.yaml"] == ENVS_BLANKED.encode()
    assert files["plain.yaml"] == b"envs: {LR: 0.1, KM_TOKEN_HINT: x-12345}\n"
    assert files["budget.yaml"] == b"name: b\nworkdir: .\nrun: python train.py\n"
    assert "leaky.yml" not in files
    assert "leaky.yml left out of the job's code: a secret's value it writes is elsewhere" \
        in caplog.text
    assert "hf_leak-99" not in caplog.text
    # The job's own file, with a secret's value it writes: its secret-named env null too.
    (project / "own.yaml").write_text("secrets: {A: own-Value-7}\n" + ENVS)
    own = _archived(tmp_path, project, job_file=project / "own.yaml", written=["own-Value-7"])
    assert own["own.yaml"] == ("secrets: {A: null}\n" + ENVS_BLANKED).encode()


# Every file the pack would hold is checked for the values of the secrets costsched knows
# for the launch: those the task files in the workdir write (the job's own and every
# sibling's), those given at launch and those configured (`known`).
WB = "wb_abcdef123456"


@pytest.fixture()
def sec(tmp_path: Path) -> Path:
    folder = tmp_path / "sec"
    folder.mkdir()
    (folder / "a.yaml").write_text("name: a\nworkdir: .\nrun: python train.py\n")
    (folder / "b.yml").write_text(f"envs: {{WANDB_API_KEY: {WB}}}  # mine: {WB}\n")
    (folder / "notes.txt").write_text(f"my wandb key is {WB}\n")
    (folder / "train.py").write_text("print('train')\n")
    return folder


def test_a_file_holding_a_sibling_task_files_value_is_left_out(
        tmp_path: Path, sec: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="costsched.codepack"):
        files = _archived(tmp_path, sec, job_file=sec / "a.yaml")
    assert "notes.txt" not in files and "b.yml" not in files
    assert files["train.py"] == b"print('train')\n"  # without the value: packed
    assert files["a.yaml"] == b"name: a\nworkdir: .\nrun: python train.py\n"
    assert "b.yml left out of the job's code: a secret's value it writes is elsewhere" \
        in caplog.text
    assert ("notes.txt left out of the job's code: it holds a secret's value, which would be "
            "stored with the code") in caplog.text
    assert len([r for r in caplog.records if "notes.txt" in r.getMessage()]) == 1
    assert WB not in caplog.text


def test_a_value_given_at_launch_is_looked_for_in_every_file_binary_and_large(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from launchers import codepack_secrets

    folder = tmp_path / "proj"
    folder.mkdir()
    (folder / "train.py").write_text("print('train')\n")
    (folder / "model.bin").write_bytes(b"\x00\xff" * 100 + b"hf_given-777" + b"\x00" * 9)
    chunk = codepack_secrets.CHUNK
    straddling = bytearray(b"x" * (2 * chunk))
    straddling[chunk - 5:chunk + 7] = b"hf_given-777"  # across two reads of the file
    (folder / "big.dat").write_bytes(bytes(straddling))
    (folder / "clean.dat").write_bytes(b"y" * (chunk + 10))
    (folder / "sky.yaml").write_text("secrets: {HF_TOKEN:}\nrun: echo hf_given-777\n")
    with caplog.at_level(logging.WARNING, logger="costsched.codepack"):
        files = _archived(tmp_path, folder, known=["hf_given-777"])
    assert set(files) == {"train.py", "clean.dat"}
    for name in ("model.bin", "big.dat", "sky.yaml"):
        assert f"{name} left out of the job's code: it holds a secret's value" in caplog.text
    assert "hf_given-777" not in caplog.text
    # Without the value known: all of them packed as they are.
    assert set(_archived(tmp_path, folder)) == {"train.py", "clean.dat", "model.bin",
                                                 "big.dat", "sky.yaml"}


def test_a_value_shorter_than_the_masked_minimum_is_looked_for_nowhere_else(
        tmp_path: Path) -> None:
    from launchers.log_masking import MIN_MASKED

    short = "k" * (MIN_MASKED - 1)
    folder = tmp_path / "proj"
    folder.mkdir()
    (folder / "sky.yaml").write_text(f"envs: {{WANDB_API_KEY: {short}}}\n")
    (folder / "notes.txt").write_text(f"the key {short} is short\n")
    files = _archived(tmp_path, folder, known=["zz9"])
    assert files["notes.txt"] == f"the key {short} is short\n".encode()
    assert files["sky.yaml"] == b"envs: {WANDB_API_KEY: null}\n"


def test_a_launch_packs_without_the_values_costsched_holds(
        tmp_path: Path, sec: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    """`pack_workdir` looks for the secrets given at launch and configured: those masked
    wherever costsched would show them (`costsched.redact`)."""
    from costsched import redact
    from launchers import codepack

    monkeypatch.setattr(redact, "_remembered", set())
    monkeypatch.setattr(codepack, "cache_dir", lambda: tmp_path / "cache")
    monkeypatch.setattr(codepack, "limit_bytes", lambda: 1 << 20)
    (sec / "b.yml").unlink()
    (sec / "notes.txt").write_text("given: hf_fromTheShell-1\n")
    redact.remember(["hf_fromTheShell-1"])
    with caplog.at_level(logging.WARNING, logger="costsched.codepack"):
        code = codepack.pack_workdir(str(sec), "a.yaml", str(sec / "a.yaml"))
    with tarfile.open(code["path"]) as tar:
        assert sorted(tar.getnames()) == ["a.yaml", "train.py"]
    assert "notes.txt left out of the job's code" in caplog.text
