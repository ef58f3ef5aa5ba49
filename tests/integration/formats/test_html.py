"""The HTML report in a real headless browser (Debian's Chromium through Selenium), and the
SARIF of a real audit against the official schema.

The page is the audit of the corpus on three targets with an empty ratchet, so it has
findings of several kinds.  A screenshot is written to build/test-artifacts/ (and, with
ZEINSPECT_UPDATE_SCREENSHOT=1, to docs/audit-report.png, the one the README and docs/ show).
"""

from __future__ import annotations

import json
import os
import shutil

import jsonschema
import pytest
from conftest import KERNELS, ROOT

TARGETS = "tgllp,dg2-g10,bmg-g21"
ARTIFACTS = ROOT / "build" / "test-artifacts"


@pytest.fixture(scope="module")
def audited(tmp_path_factory, sid_compiler, session_cache):
    import subprocess
    import sys

    tmp = tmp_path_factory.mktemp("report")
    (tmp / "empty.txt").write_text("")
    env = dict(os.environ, ZEINSPECT_CACHE_DIR=str(session_cache), PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-m", "zeinspect", "audit", str(KERNELS), "-t", TARGETS, "--compiler",
                           sid_compiler.id, "--ratchet", str(tmp / "empty.txt"), "--format", "json",
                           "--html", str(tmp / "audit.html"), "--sarif", str(tmp / "audit.sarif")],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=900)
    assert proc.returncode == 1, proc.stderr  # the corpus has unlisted scratch users
    return tmp, json.loads(proc.stdout)


def test_the_page_loads_and_shows_every_report(audited, browser):
    tmp, doc = audited
    reports = [v for v in doc["verdicts"] if v["report"] is not None]
    browser.get((tmp / "audit.html").as_uri())
    errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == []
    assert browser.execute_script("return window.zeinspect.cells") == len(reports)
    # The corpus is small: every row is drawn, one cell per report.
    assert len(browser.find_elements("css selector", "#rows .cell[data-k]")) == len(reports)
    assert "gate failed" in browser.find_element("id", "summary").text
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(ARTIFACTS / "audit-report.png"))
    if os.environ.get("ZEINSPECT_UPDATE_SCREENSHOT") == "1":
        shutil.copy(ARTIFACTS / "audit-report.png", ROOT / "docs" / "audit-report.png")


def test_a_filter_narrows_the_rows_and_a_click_shows_details(audited, browser):
    tmp, doc = audited
    browser.get((tmp / "audit.html").as_uri())
    kernels = {v["report"]["kernel"] for v in doc["verdicts"] if v["report"] is not None}
    assert len(browser.find_elements("css selector", "#rows .row")) == len(kernels)
    browser.find_element("id", "filter").send_keys("fma_tile")
    assert len(browser.find_elements("css selector", "#rows .row")) == 1
    browser.find_element("css selector", "#rows .cell[data-k]").click()
    detail = browser.find_element("id", "detail").text
    assert "fma_tile on " in detail and "reproduce:" in detail
    assert "which lines spill: zeinspect explain " in detail and " -k fma_tile -t " in detail
    # The occupancy its register count gives, as the report's JSON has it.
    target = detail.split("fma_tile on ", 1)[1].split()[0]
    (report,) = [v["report"] for v in doc["verdicts"]
                 if v["report"] and v["report"]["kernel"] == "fma_tile" and v["report"]["target"] == target]
    o = report["occupancy"]
    assert (f"occupancy: {o['threads_per_eu']} of {o['max_threads_per_eu']} threads per EU, "
            f"max work-group {o['max_work_group_size']}") in detail


def test_the_sarif_of_a_real_audit_is_valid(audited):
    tmp, doc = audited
    schema = json.loads((ROOT / "tests" / "schemas" / "sarif-schema-2.1.0.json").read_text())
    sarif = json.loads((tmp / "audit.sarif").read_text())
    jsonschema.validate(sarif, schema)
    failing = {(v["report"]["input"], v["report"]["kernel"], v["verdict"]) for v in doc["verdicts"]
               if v["fails"] and v["report"] is not None}
    results = sarif["runs"][0]["results"]
    assert {(r["properties"]["input"], r["properties"]["kernel"], r["ruleId"]) for r in results} == failing
    assert all(r["locations"][0]["physicalLocation"].get("region") for r in results)  # .cl sources: lines known
