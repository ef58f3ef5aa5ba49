"""`zeinspect explain --html` in a real headless browser: the page loads without a console
error, the hottest line (by the JSON's own weights) is the one outlined, and the matrix links
to it.  A screenshot is written to build/test-artifacts/ (and, with
ZEINSPECT_UPDATE_SCREENSHOT=1, to docs/explain.png, the one docs/guides/why-it-spills.md shows)."""

from __future__ import annotations

import os
import shutil

from conftest import KERNELS, ROOT

from zeinspect import occupancy

ARTIFACTS = ROOT / "build" / "test-artifacts"


def test_the_explain_page_outlines_the_hottest_line(cli, sid_compiler, browser, tmp_path):
    page = tmp_path / "explain.html"
    code, doc = cli.json("explain", KERNELS / "sg32_accumulate.cl", "-t", "tgllp,dg2-g10,lnl-m", "--compiler",
                        sid_compiler.id, "--html", page)
    assert code == 0
    weights: dict[tuple[str, int], int] = {}
    for report in doc["reports"]:
        for x in report["lines"]:
            if x["line"] is not None:
                weights[(x["file"], x["line"])] = weights.get((x["file"], x["line"]), 0) + x["weight"]
    hottest_file, hottest = min((k for k in weights if weights[k]), key=lambda k: (-weights[k], k))
    assert hottest_file == str(KERNELS / "sg32_accumulate.cl")
    browser.get(page.as_uri())
    assert [e for e in browser.get_log("browser") if e["level"] == "SEVERE"] == []
    # Each target's totals give the occupancy of its register count and SIMD width.
    totals = browser.find_element("css selector", "ul.totals").text
    for report in doc["reports"]:
        o = occupancy.limits(report["ip"], grf_count=report["totals"]["grf"], simd=report["totals"]["simd"])
        assert f"{o.threads_per_eu} of {o.max_threads_per_eu} threads per EU, max work-group {o.max_work_group_size}" \
            in totals
    outlined = browser.find_elements("css selector", "tr.hottest")
    assert [int(r.get_attribute("data-line")) for r in outlined] == [hottest]
    assert browser.execute_script("return window.zeinspect.hottest") == [{"file": hottest_file, "line": hottest}]
    # One matrix cell per target; a spilling cell links to the hottest line.
    cells = browser.find_elements("css selector", ".matrix td[data-target]")
    assert sorted(c.get_attribute("data-target") for c in cells) == sorted(r["target"] for r in doc["reports"])
    link = browser.find_element("css selector", ".matrix td[data-target='dg2-g10'] a")
    link.click()
    assert browser.execute_script("return location.hash") == f"#k0-f0-l{hottest}"
    assert "flash" in browser.find_element("id", f"k0-f0-l{hottest}").get_attribute("class")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(ARTIFACTS / "explain.png"))
    if os.environ.get("ZEINSPECT_UPDATE_SCREENSHOT") == "1":
        shutil.copy(ARTIFACTS / "explain.png", ROOT / "docs" / "explain.png")
