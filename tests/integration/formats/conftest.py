"""Shared by the HTML tests: a real headless browser (Debian's Chromium through Selenium)."""

from __future__ import annotations

import os
import shutil

import pytest


@pytest.fixture(scope="module")
def browser():
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not chromium or not driver:
        if os.environ.get("ZEINSPECT_REQUIRE_TOOLCHAINS") == "1":
            pytest.fail("chromium and chromium-driver are missing: apt-get install chromium chromium-driver")
        pytest.skip("no chromium")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1400,1000"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    b = webdriver.Chrome(service=Service(driver), options=options)
    yield b
    b.quit()
