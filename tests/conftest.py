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
