"""Headless Chromium for the tests that check pages in a real browser (Selenium with
Debian's ``chromium`` and ``chromium-driver``): without them, those tests skip."""

from __future__ import annotations

import json
import shutil
from contextlib import contextmanager

import pytest


def open_browser():
    """A headless Chromium session that logs every request, or a skip saying what is missing."""
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.skip("no selenium: pip install 'puzzlespace[test]'")
    if not chromium or not driver:
        pytest.skip("no headless Chromium: apt-get install chromium chromium-driver")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1000,800"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    return webdriver.Chrome(service=Service(driver), options=options)


def requests_made(browser) -> list[str]:
    """The URLs the page requested since the last call."""
    urls = []
    for entry in browser.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


@contextmanager
def less_motion(browser):
    """The page as a reader who asks for less motion sees it (the system's setting,
    ``prefers-reduced-motion: reduce``), within the block."""
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia",
                            {"features": [{"name": "prefers-reduced-motion", "value": "reduce"}]})
    try:
        yield
    finally:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
