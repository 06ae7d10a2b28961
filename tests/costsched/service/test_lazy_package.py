"""`costsched.service` imports each name on first use: importing it loads no heavy library,
and `plan`, `backtest`, `prices` and `decide` stay the functions once their modules load."""

from __future__ import annotations

import subprocess
import sys


def run(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True).stdout.strip()


def test_importing_the_package_loads_no_heavy_library() -> None:
    out = run("import sys\nimport costsched.service\n"
              "print(sorted({m.split('.')[0] for m in sys.modules} & "
              "{'pandas', 'scipy', 'sqlalchemy', 'cvxpy'}))")
    assert out == "[]"


def test_names_shared_with_modules_stay_functions() -> None:
    out = run("import costsched.service.plan, costsched.service.backtest\n"
              "import costsched.service.prices, costsched.service.decide\n"
              "from costsched import service\n"
              "from costsched.service import jobs\n"
              "print([callable(f) and f.__module__ for f in (service.plan, service.backtest,"
              " service.prices, service.decide)], jobs.__name__)")
    assert out == ("['costsched.service.plan', 'costsched.service.backtest', "
                   "'costsched.service.prices', 'costsched.service.decide'] "
                   "costsched.service.jobs")


def test_every_public_name_resolves() -> None:
    from costsched import service

    assert sorted(service.__all__) == sorted(service._MODULES)
    for name in service.__all__:
        assert getattr(service, name) is not None
