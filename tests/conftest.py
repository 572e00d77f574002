import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _find_seed_results() -> Path:
    for base in (ROOT.parent / "shared", ROOT / "shared"):
        path = base / "data" / "seed_results.json"
        if path.exists():
            return path
    raise FileNotFoundError("shared/data/seed_results.json not found beside the checkout")


@pytest.fixture(scope="session")
def seeds() -> dict:
    """Every number the seed pages print (shared/data/seed_results.json)."""
    return json.loads(_find_seed_results().read_text())


@pytest.fixture(scope="session")
def examples() -> Path:
    return ROOT / "examples"


@pytest.fixture(scope="session", autouse=True)
def private_cache(tmp_path_factory):
    """Pattern databases and tablebases built by tests go to a temporary cache, shared by the session."""
    import os

    path = tmp_path_factory.mktemp("cache")
    old = os.environ.get("PUZZLESPACE_CACHE")
    os.environ["PUZZLESPACE_CACHE"] = str(path)
    yield path
    if old is None:
        os.environ.pop("PUZZLESPACE_CACHE", None)
    else:
        os.environ["PUZZLESPACE_CACHE"] = old
