"""Keys of the configuration that name places, stores, Azure's names and files: each bad
value is refused by `config show` (and so by every command) in one line naming the file,
the key (and the entry of a mapping) and what is accepted; good values pass."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from costsched.cli import app
from costsched.config import load

SUB = "00000000-0000-0000-0000-000000000000"
GROUP = f"/subscriptions/{SUB}/resourceGroups/rg/providers/"
SUBNET = GROUP + "Microsoft.Network/virtualNetworks/v/subnets/default"
IDENTITY = GROUP + "Microsoft.ManagedIdentity/userAssignedIdentities/ckpt"
IMAGE = GROUP + "Microsoft.Compute/images/trainer"


def refusal(tmp_path: Path, text: str, env: dict[str, str] | None = None) -> str:
    path = tmp_path / "config.toml"
    path.write_text(text)
    result = CliRunner().invoke(app, ["config", "show", "--config", str(path)], env=env)
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == 2 and len(lines) == 1, result.output
    assert lines[0].startswith(f"error: {path}: ") or lines[0].startswith("error: env ")
    return lines[0]


@pytest.mark.parametrize(("text", "said"), [
    ('[launch]\ncheckpoint_roots = {aws = "s3://bkt/x", gpc = "gs://bkt/y"}',
     "launch.checkpoint_roots.gpc 'gs://bkt/y': not a cloud: expected one of aws, gcp, azure; "
     "did you mean 'gcp'?"),
    ('[launch]\ncheckpoint_roots = {aws = "s3://"}',
     "launch.checkpoint_roots.aws 's3://': expected s3://BUCKET/PATH"),
    ('[launch]\ncheckpoint_roots = {azure = "https://acct.blob.core.windows.net/"}',
     "launch.checkpoint_roots.azure 'https://acct.blob.core.windows.net/': expected"),
    ('[launch]\ncheckpoint_roots = {gcp = "/srv/checkpoints"}',
     "launch.checkpoint_roots.gcp '/srv/checkpoints': expected s3://BUCKET/PATH"),
    ('[launch]\ncheckpoint_root = "s3:/my-bucket/ckpt"',
     "launch.checkpoint_root 's3:/my-bucket/ckpt': expected s3://BUCKET/PATH"),
    ('[launch]\ncheckpoint_root = "s3://My Bucket/ckpt"',
     "a bucket of 3-222 lowercase letters, digits, '.', '-', '_'"),
    ('[launch]\ncheckpoint_root = ""', "launch.checkpoint_root '': expected a path or a "
     "location in object storage"),
    ('[daemon]\nlog_file = ""', "daemon.log_file '': expected a file's path"),
    ('[daemon]\nlog_file = "/var/log/"', "daemon.log_file '/var/log/': expected a file's path"),
    ('[azure]\nlocation = "eastus9"', "azure.location 'eastus9': region 'eastus9': not a "
     "region of azure: its series has eastus, eastus2, and a new one would be eastus3"),
    ('[azure]\nsubnets = {eastus9 = "x"}', "azure.subnets.eastus9 'x': region 'eastus9'"),
    ('[azure]\nsubnets = {eastus = "default"}',
     "azure.subnets.eastus 'default': expected a subnet's id, /subscriptions/SUB/"),
    ('[azure]\nimage = "ubuntu"', "azure.image 'ubuntu': expected PUBLISHER:OFFER:SKU:VERSION"),
    ('[azure]\nsubscription_id = "my-subscription"',
     "azure.subscription_id 'my-subscription': expected a subscription id such as"),
    ('[azure]\nstorage_account = "My_Account"',
     "azure.storage_account 'My_Account': expected 3-24 lowercase letters and digits"),
    ('[azure]\nidentity = "ckpt"', "azure.identity 'ckpt': expected an identity's id, "
     "/subscriptions/SUB/resourceGroups/GROUP/providers/Microsoft.ManagedIdentity/"),
    ('[azure]\nvnet = "my vnet"', "azure.vnet 'my vnet': expected 1-40 letters"),
    ('[azure]\nssh_public_key = ""', "azure.ssh_public_key '***': expected a public key "),
    ('[azure]\nkey_vault = "my_vault"', "azure.key_vault 'my_vault': expected a key "
     "vault's name (3-24 letters, digits and dashes, starting with a letter) or its URL, "
     "https://NAME.vault.azure.net"),
    ('[azure]\nkey_vault = "https://vault.example.com"', "azure.key_vault "
     "'https://vault.example.com': expected a key vault's name"),
])
def test_a_bad_value_is_one_line_naming_file_key_and_accepted(tmp_path: Path, text: str,
                                                              said: str) -> None:
    assert said in refusal(tmp_path, text + "\n")


def test_the_environment_is_checked_as_the_file(tmp_path: Path) -> None:
    line = refusal(tmp_path, "", env={"COSTSCHED_AZURE_LOCATION": "eastus9",
                                      "COSTSCHED_CONFIG": ""})
    assert line.startswith("error: env COSTSCHED_AZURE_LOCATION: azure.location 'eastus9'")
    line = refusal(tmp_path, "", env={"COSTSCHED_LAUNCH_CHECKPOINT_ROOTS": "gcp=gs://",
                                      "COSTSCHED_CONFIG": ""})
    assert "launch.checkpoint_roots.gcp 'gs://': expected" in line
    # (the suite turns autostart off through the environment, which the file cannot undo)
    line = refusal(tmp_path, "", env={"COSTSCHED_DAEMON_AUTOSTART": "maybe",
                                      "COSTSCHED_CONFIG": ""})
    assert "daemon.autostart 'maybe': expected true or false" in line


def test_good_values_pass_as_given(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(f"""
[launch]
checkpoint_roots = {{ aws = "s3://bkt/x/", gcp = "gs://bkt", azure = "az://c/p" }}
checkpoint_root = "file:///srv/checkpoints"
[daemon]
log_file = "~/costsched/daemon.log"
[azure]
subscription_id = "{SUB.upper()}"
location = "westeurope"
subnets = {{ eastus = "{SUBNET.lower()}" }}
image = "Canonical:ubuntu-24_04-lts:server:latest"
identity = "{IDENTITY}"
storage_account = "ckpts01"
vnet = "team.net-1"
""")
    config = load(path).config
    assert config.launch.checkpoint_roots == {"aws": "s3://bkt/x", "gcp": "gs://bkt",
                                             "azure": "az://c/p"}
    assert config.azure.subnets == {"eastus": SUBNET.lower()}
    for root in ("/srv/checkpoints", "ckpt", "s3://my-bucket/ckpt", "az://c/p",
                 "https://acct.blob.core.windows.net/c/p"):
        path.write_text(f'[launch]\ncheckpoint_root = "{root}"\n')
        assert load(path).config.launch.checkpoint_root == root
    path.write_text(f'[azure]\nimage = "{IMAGE}"\n')
    assert load(path).config.azure.image == IMAGE
    from costsched.clouds.azure import key_vault_url

    for vault in ("ml-Secrets1", "https://ml-secrets1.vault.azure.net/"):
        path.write_text(f'[azure]\nkey_vault = "{vault}"\n')
        assert key_vault_url(load(path).config.azure.key_vault) == \
            "https://ml-secrets1.vault.azure.net"
