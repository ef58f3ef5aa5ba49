#!/bin/sh
# The pictures of the docs (docs/audit-report.png, docs/explain.png), rendered from the code's
# own HTML reports in the headless Chromium `make test` installs: the browser tests write them
# when ZEINSPECT_UPDATE_SCREENSHOT=1, so a picture always matches the code that drew it.
set -eu
cd "$(dirname "$0")/.."
ZEINSPECT_UPDATE_SCREENSHOT=1 .venv/bin/python -m pytest -q -p no:cacheprovider \
    tests/integration/formats/test_html.py tests/integration/formats/test_explain_html.py
