"""`zeinspect diff --html` in a real headless browser, and its `--sarif` against the schema."""

from __future__ import annotations

import json

import jsonschema
from conftest import KERNELS, ROOT


def test_the_diff_page_shows_every_entry_and_both_sides(cli, sid_compiler, browser, tmp_path):
    page, sarif = tmp_path / "diff.html", tmp_path / "diff.sarif"
    code, doc = cli.json("diff", KERNELS, "--options", "", "--options", "-cl-intel-256-GRF-per-thread", "-t",
                        "dg2-g10,bmg-g21", "--compiler", sid_compiler.id, "--html", page, "--sarif", sarif)
    assert code == 1 and doc["counts"]["worse"] > 0
    browser.get(page.as_uri())
    assert [e for e in browser.get_log("browser") if e["level"] == "SEVERE"] == []
    assert browser.execute_script("return window.zeinspect.cells") == len(doc["entries"])
    assert len(browser.find_elements("css selector", "td.c")) == len(doc["entries"])
    worse = next(e for e in doc["entries"] if e["change"] == "worse")
    first = browser.find_elements("css selector", "td.c[title='worse']")[0]
    first.click()
    detail = browser.find_element("id", "detail").text
    assert "change: worse" in detail and "old: ok" in detail and "new: ok" in detail
    assert worse["why"][0].split()[0] in detail
    schema = json.loads((ROOT / "tests" / "schemas" / "sarif-schema-2.1.0.json").read_text())
    found = json.loads(sarif.read_text())
    jsonschema.validate(found, schema)
    assert len(found["runs"][0]["results"]) == doc["counts"]["worse"]
