import json
import signal
from pathlib import Path

import pytest
from hypothesis import settings

ROOT = Path(__file__).resolve().parents[1]

# Property tests try 50 examples each by default (a test may ask fewer), 300 with
# ``--hypothesis-profile=slow``, which the slow run passes.
settings.register_profile("default", max_examples=50, deadline=None)
settings.register_profile("slow", max_examples=300, deadline=None)
settings.load_profile("default")

# The tests that press Ctrl-C send SIGINT to a child, which must take it as a terminal's
# Ctrl-C: a shell that starts the suite in the background ignores SIGINT, and a child
# inherits an ignored signal (a handled one is reset to the default when it starts).
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="session")
def seeds() -> dict:
    """Every number the original puzzle pages print (``tests/data/seed_results.json``, which names them)."""
    return json.loads((DATA / "seed_results.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def examples() -> Path:
    return ROOT / "examples"


@pytest.fixture(scope="session", autouse=True)
def private_cache(tmp_path_factory, worker_id):
    """Pattern databases and tablebases built by tests go to a temporary cache, shared by
    the session's processes (a database one builds, the others wait for and read: the
    cache's own locking)."""
    import os

    if worker_id == "master":
        path = tmp_path_factory.mktemp("cache")
    else:  # each process's base folder is in the session's
        path = tmp_path_factory.getbasetemp().parent / "cache"
        path.mkdir(exist_ok=True)
    old = os.environ.get("PUZZLESPACE_CACHE")
    os.environ["PUZZLESPACE_CACHE"] = str(path)
    yield path
    if old is None:
        os.environ.pop("PUZZLESPACE_CACHE", None)
    else:
        os.environ["PUZZLESPACE_CACHE"] = old


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium (:mod:`browsing`), shared by a module's tests; skips without it."""
    from browsing import open_browser

    session = open_browser()
    yield session
    session.quit()
