#!/bin/sh
# Run every fuzz target for RUNS executions (default 1,000,000) or SECONDS (default 3600),
# whichever ends first, one after another; print one summary line per target.
# Usage: scripts/fuzz_all.sh [RUNS] [SECONDS]    (ONLY="profile package" runs those targets alone)
set -u
cd "$(dirname "$0")/.."
RUNS=${1:-1000000}
SECONDS_MAX=${2:-3600}
WORK=$(mktemp -d)
# Every target tests/fuzz/targets.py defines, in its order (a new reader's target is run too).
TARGETS=$(.venv/bin/python -c "import sys; sys.path.insert(0, 'tests/fuzz'); import targets; print(' '.join(targets.TARGETS))")
# unitrace's own recorded outputs seed the profile reader too, where ../shared has them (never copied here).
GOLD="$(cd .. && pwd)/shared/realworld/unitrace-gold"
for t in ${ONLY:-$TARGETS}; do
  mkdir -p "$WORK/$t"
  extra=""
  [ "$t" = profile ] && [ -d "$GOLD" ] && extra="$GOLD"
  start=$(date +%s)
  .venv/bin/python scripts/fuzz.py "$t" -runs="$RUNS" -max_total_time="$SECONDS_MAX" -timeout=20 -rss_limit_mb=2048 \
      -artifact_prefix="$WORK/$t-" "$WORK/$t" "tests/fuzz/corpus/$t" $extra > "$WORK/$t.log" 2>&1
  rc=$?
  end=$(date +%s)
  done_line=$(grep -E "^Done [0-9]+ runs" "$WORK/$t.log" | tail -1)
  execs=$(grep -oE "^#[0-9]+" "$WORK/$t.log" | tail -1 | tr -d '#')
  echo "$t: exit $rc, $((end - start)) s, ${done_line:-last #$execs}"
  [ $rc -eq 0 ] || { grep -A12 "Uncaught\|ERROR" "$WORK/$t.log" | head -20; ls "$WORK"/$t-* 2>/dev/null; }
done
echo "work folder: $WORK"
