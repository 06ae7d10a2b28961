"""What the azure launcher reads from the configuration before a VM's document is made: the
public key file (a private key is refused and never shown) and the image."""

from __future__ import annotations

from pathlib import Path

import pytest

from costsched.model import InvalidInput
from launchers import azure_vm

ED25519 = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGbb1fQlQqvG7ZgQ0x me@laptop"
PRIVATE = ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAE\n"
           "-----END OPENSSH PRIVATE KEY-----\n")


def test_a_public_key_file_is_read_as_its_one_line(tmp_path: Path) -> None:
    key = tmp_path / "id.pub"
    key.write_text(ED25519 + "\n")
    assert azure_vm.public_ssh_key(str(key)) == ED25519


@pytest.mark.parametrize(("content", "said"), [
    (PRIVATE, "is a private key, never sent anywhere: name its public half"),
    ("hello\n", "not an OpenSSH public key: expected one line 'ssh-rsa AAAA...'"),
    (ED25519 + "\n" + ED25519 + "\n", "not an OpenSSH public key"),
    ("ssh-rsa AAAA" + "A" * 20_000, "not an OpenSSH public key"),
    (None, "cannot be read (No such file or directory)"),
])
def test_a_key_file_that_is_no_public_key_is_one_line(tmp_path: Path, content: str | None,
                                                      said: str) -> None:
    key = tmp_path / "id"
    if content is not None:
        key.write_text(content)
    with pytest.raises(InvalidInput) as refused:
        azure_vm.public_ssh_key(str(key))
    line = str(refused.value)
    assert line.startswith(f"config azure.ssh_public_key '{key}': ") and said in line
    assert "\n" not in line and "b3BlbnNzaC1rZXkt" not in line


def test_the_image_is_read_by_the_rule_the_config_checks() -> None:
    assert azure_vm.image_reference("Canonical:ubuntu-24_04-lts:server:latest") == {
        "publisher": "Canonical", "offer": "ubuntu-24_04-lts", "sku": "server",
        "version": "latest"}
    with pytest.raises(InvalidInput, match="expected PUBLISHER:OFFER:SKU:VERSION"):
        azure_vm.image_reference("ubuntu:22.04")
