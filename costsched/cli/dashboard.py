"""`costsched dashboard`: a local web UI over the store, served by uvicorn."""

from __future__ import annotations

import os
import socket
from importlib.util import find_spec
from pathlib import Path
from typing import Annotated

import typer

from costsched.cli.common import DbOption, console, friendly_errors
from costsched.model import InvalidInput

ENV_TOKEN = "COSTSCHED_DASHBOARD_TOKEN"
NEEDS = ("starlette", "jinja2", "uvicorn")
MISSING = ("the dashboard needs the 'dashboard' extra: pip install 'costsched[dashboard]'")


@friendly_errors
def dashboard(
    host: Annotated[str, typer.Option(help="Address to serve on; another than loopback "
                                      "needs a token.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port (0: any free one).", min=0, max=65535)]
    = 8765,
    actions: Annotated[bool, typer.Option(
        "--actions", help="Serve stop, start and `migrate --to` (behind the token, with CSRF "
        "protection); read-only without it.")] = False,
    token_file: Annotated[Path | None, typer.Option(
        help=f"A file holding the token (else ${ENV_TOKEN}); never on the command line.",
        show_default=False)] = None,
    poll: Annotated[float, typer.Option(help="Seconds between two looks at the store for "
                                        "live updates.", min=0.2)] = 2.0,
    db: DbOption = None,
) -> None:
    """A live web view of the jobs, their spend and the prices under them, at
    http://127.0.0.1:8765/ by default (Ctrl-C stops); with a JSON API under /api/."""
    if any(find_spec(name) is None for name in NEEDS):
        console.print(MISSING, highlight=False, markup=False)
        raise typer.Exit(1)
    import uvicorn

    from costsched.dashboard.app import create_app
    from costsched.dashboard.auth import Access, check_token, is_loopback
    from costsched.service.stores import open_store

    token, source = _token(token_file)
    try:
        check_token(token, host=host, actions=actions, source=source)
    except ValueError as exc:
        raise InvalidInput(str(exc)) from None
    access = Access(token, actions=actions, reads_need_token=not is_loopback(host))
    app = create_app(open_store(db), access, poll_seconds=poll)
    sock = _bind(host, port)
    bound_host, bound_port = sock.getsockname()[:2]
    shown = f"[{bound_host}]" if ":" in bound_host else bound_host
    mode = "actions on, behind the token" if actions else "read-only"
    console.print(f"costsched dashboard: http://{shown}:{bound_port}/ ({mode}; Ctrl-C stops)",
                  highlight=False, markup=False)
    config = uvicorn.Config(app, log_level="warning", access_log=False,
                            timeout_graceful_shutdown=2, lifespan="off")
    uvicorn.Server(config).run(sockets=[sock])


def _token(path: Path | None) -> tuple[str | None, str]:
    """The token and where it came from (a file named, else the environment)."""
    if path is not None:
        try:
            text = path.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise InvalidInput(f"--token-file {path}: cannot be read ({exc.strerror})") from None
        except UnicodeDecodeError:
            text = None
        if not text:  # a file named for the token that holds none: never served without it
            raise InvalidInput(f"--token-file {path}: "
                               f"{'empty' if text is not None else 'not text'}: expected the "
                               "token as UTF-8 text")
        return text, f"--token-file {path}"
    value = os.environ.get(ENV_TOKEN, "").strip()
    return value or None, ENV_TOKEN


def _bind(host: str, port: int) -> socket.socket:
    """A listening socket on host:port (port 0: one the system picks)."""
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
    except OSError as exc:
        raise InvalidInput(f"--host {host} --port {port}: cannot serve there "
                           f"({exc.strerror or exc})") from None
    sock.set_inheritable(True)
    return sock
