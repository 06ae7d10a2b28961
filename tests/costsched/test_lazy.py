"""pandas under the costsched command keeps its strings without pyarrow: importing it
loads no pyarrow, and frames read and write Parquet files as before; the Python API leaves
pandas as it is. Each check runs in a fresh interpreter: what a process imports first is
only seen there."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def run(code: str, cwd: Path) -> dict:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=cwd)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_pandas_under_costsched_loads_no_pyarrow(tmp_path: Path) -> None:
    seen = run("import json, sys\nimport costsched.cli\nfrom costsched.lazy import pandas as pd\n"
               "s = pd.Series(['b', 'a', None])\n"
               "print(json.dumps({'arrow': 'pyarrow' in sys.modules, "
               "'storage': s.dtype.storage, 'sorted': s.sort_values().tolist()[:2]}))",
               tmp_path)
    assert seen == {"arrow": False, "storage": "python", "sorted": ["a", "b"]}


def test_parquet_round_trips_after_pandas_loaded(tmp_path: Path) -> None:
    seen = run("import json\nimport costsched.cli\nimport pandas as pd\n"
               "frame = pd.DataFrame({'cloud': ['aws', None, 'gcp'], 'usd': [1.5, 2.0, 3.25]})\n"
               "frame.to_parquet('f.parquet')\nback = pd.read_parquet('f.parquet')\n"
               "print(json.dumps({'equal': bool(back.equals(frame)), "
               "'dtype': str(back['cloud'].dtype)}))", tmp_path)
    assert seen == {"equal": True, "dtype": "str"}


def test_a_process_that_loaded_pyarrow_first_keeps_it(tmp_path: Path) -> None:
    seen = run("import json\nimport pyarrow\nimport costsched.cli\nimport pandas as pd\n"
               "print(json.dumps({'storage': pd.Series(['a']).dtype.storage}))", tmp_path)
    assert seen == {"storage": "pyarrow"}


def test_the_python_api_leaves_pandas_as_it_is(tmp_path: Path) -> None:
    """A notebook that imports costsched gets the pandas its environment gives."""
    seen = run("import json\nimport costsched\nfrom costsched import store\nimport pandas as pd\n"
               "print(json.dumps({'storage': pd.Series(['a']).dtype.storage}))", tmp_path)
    assert seen == {"storage": "pyarrow"}
