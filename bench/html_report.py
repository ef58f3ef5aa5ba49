#!/usr/bin/env python3
"""How long the HTML report of a large audit takes to load in a real browser.

Builds the page for 5,000 kernels x the 19 default targets (reports made up, with scratch
figures spread over the whole scale, some overflows, failures and n/a cells, so the page
is what a real library gives), opens it in Debian's Chromium (headless, through Selenium)
and prints the page's size and the time until its script has drawn the heat map
(`performance.now()` when the page is ready), median of 5 loads.  Goal: under 3 s.
Usage: .venv/bin/python bench/html_report.py [--kernels N]
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import record  # noqa: E402

from zeinspect.formats.html import page  # noqa: E402
from zeinspect.judge.audit import audit  # noqa: E402
from zeinspect.judge.ratchet import Ratchet  # noqa: E402
from zeinspect.levers import Shape  # noqa: E402
from zeinspect.model import KernelReport, Source, Status  # noqa: E402
from zeinspect.toolchain.targets import DEFAULT_TARGETS, KNOWN_IPS  # noqa: E402


def reports(kernels: int) -> list[KernelReport]:
    rng = random.Random(1)
    ip_of = {name: ip for ip, name in KNOWN_IPS.items()}
    out = []
    for k in range(kernels):
        for target in DEFAULT_TARGETS:
            roll = rng.random()
            status = Status.SCRATCH_OVERFLOW if roll < 0.002 else Status.BUILD_FAILED if roll < 0.003 else \
                Status.NOT_APPLICABLE if roll < 0.1 else Status.OK
            spill = int(2 ** rng.uniform(4, 17)) if status is Status.OK and roll > 0.8 else 0
            out.append(KernelReport(input=f"lib.so[image {k}]", kernel=f"_ZTSN6oneapi3mkl3rng{k}E", target=target,
                                    ip=ip_of.get(target, "12.55.8"), compiler="ocloc/igc", shape=Shape(),
                                    status=status, source=Source.AOT, simd=16, grf=128, spill_bytes=spill,
                                    private_bytes=0, scratch_space_bytes=spill, command="ocloc compile ...",
                                    reason="why" if status is not Status.OK else None))
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kernels", type=int, default=5000)
    args = parser.parse_args()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    result = audit(reports(args.kernels), Ratchet(path="scratch_ratchet.txt", dialect="native"), [])
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "report.html"
        path.write_text(page(result, [], strict=False, seconds=1.0))
        options = webdriver.ChromeOptions()
        options.binary_location = shutil.which("chromium")
        for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1400,1000"):
            options.add_argument(arg)
        browser = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)
        try:
            times = []
            for _ in range(5):
                browser.get(path.as_uri())
                times.append(browser.execute_script("return window.zeinspect.ready") / 1000)
            cells = browser.execute_script("return window.zeinspect.cells")
        finally:
            browser.quit()
        size = path.stat().st_size
    print(f"{args.kernels} kernels x {len(DEFAULT_TARGETS)} targets = {cells} cells, page {size / 2**20:.1f} MiB")
    print(f"ready after {statistics.median(times):.2f} s (median of 5; min {min(times):.2f}, max {max(times):.2f})"
          "  (goal under 3 s)")
    record.write("html_report", "The HTML report of a large audit, loading in headless Chromium", [
        {"kernels": args.kernels, "targets": len(DEFAULT_TARGETS), "cells": cells,
         "page (MiB)": round(size / 2**20, 1), "ready (s, median of 5)": round(statistics.median(times), 2),
         "min s": round(min(times), 2), "max s": round(max(times), 2), "goal": "under 3 s"}],
        note="The time until the page's script has drawn the heat map (performance.now() when ready).")


if __name__ == "__main__":
    main()
