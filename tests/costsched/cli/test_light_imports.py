"""What the everyday commands import and print: the report's package, the agents'
heartbeats and the containers' module load only what is used, and the consoles print
what they are given (no emoji codes)."""

from __future__ import annotations

import subprocess
import sys

from costsched.cli import common


def loaded_after(code: str, prefixes: tuple[str, ...]) -> set[str]:
    """The modules whose name starts with one of `prefixes`, loaded in a fresh interpreter
    after `code`."""
    probe = (f"{code}\nimport sys\n"
             f"print(' '.join(m for m in sys.modules if m.startswith({prefixes!r})))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True)
    return set(out.stdout.split())


def test_the_settled_amounts_load_no_report() -> None:
    """status reads `report.settled`: the report's frames and tables stay unloaded."""
    loaded = loaded_after("import costsched.report.settled", ("costsched.report",))
    assert "costsched.report.settled" in loaded
    assert "costsched.report.data" not in loaded


def test_the_report_package_still_gives_report_and_build() -> None:
    code = ("from costsched.report import Report, build\n"
            "from costsched.report.data import Report as R, build as b\n"
            "assert Report is R and build is b")
    assert "costsched.report.data" in loaded_after(code, ("costsched.report",))


def test_an_unknown_name_of_the_report_package_is_an_attribute_error() -> None:
    import costsched.report

    try:
        costsched.report.nothing_here  # noqa: B018 - the read is the test
    except AttributeError as e:
        assert "nothing_here" in str(e)
    else:
        raise AssertionError("costsched.report.nothing_here read")


def test_heartbeats_and_containers_load_no_store_client_nor_http() -> None:
    loaded = loaded_after("import launchers.heartbeats, launchers.containers",
                          ("launchers.checkpoints", "urllib.request", "http.client"))
    assert loaded == set()


def test_the_consoles_print_emoji_codes_as_written() -> None:
    for console in (common.console, common.err_console):
        with console.capture() as captured:
            console.print("job :cd: at :rocket:", soft_wrap=True)
        assert captured.get().strip() == "job :cd: at :rocket:"


def test_a_live_status_line_prints_emoji_codes_as_written() -> None:
    texts = []
    with common.live_status("waiting :cd:") as live:
        texts.append(live._status.renderable.text.plain)
        live.update("still [bold]waiting[/bold] :rocket:")
        texts.append(live._status.renderable.text.plain)
    assert texts == ["waiting :cd:", "still waiting :rocket:"]
