#!/usr/bin/env bash
# Runs README.md's curl examples as a reader would paste them: every ```bash block preceded by a
# `<!-- walkthrough -->` line, in order, in one shell, against a fresh embedded server (http://localhost:3000 in the
# README becomes its address, TOKEN its bootstrap token). A request that answers non-2xx fails the walkthrough; a
# block marked `<!-- walkthrough expect=<code> -->` must answer that error code instead. Needs `npm run build` first.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib/test-server.sh
source scripts/lib/test-server.sh
require_tools curl jq

start_test_server
script="$TEST_SERVER_DIR/walkthrough.sh"
{
  echo 'set -euo pipefail'
  echo 'trap '\''echo "README walkthrough: failed at: $BASH_COMMAND" >&2'\'' ERR'
  # --fail-with-body: a non-2xx answer is printed and fails the command (and, under pipefail, its pipeline).
  echo 'curl() { command curl --fail-with-body "$@" || { local rc=$?; local url=""; for a in "$@"; do case $a in http*) url=$a ;; esac; done; printf "\\nREADME walkthrough: curl exited %s (22: a non-2xx answer, printed above) on %s\\n" "$rc" "$url" >&2; return "$rc"; }; }'
  echo 'TOKEN="$ADMIN_TOKEN"'
  awk -v url="$API_URL" '
    /^<!-- walkthrough( expect=[a-z_]+)? -->$/ { marked = 1; expect = ""; if (match($0, /expect=[a-z_]+/)) expect = substr($0, RSTART + 7, RLENGTH - 7); next }
    marked && /^```bash$/ { inside = 1; marked = 0; blocks++
      printf "echo \"--- README block %d\" >&2\n", blocks
      if (expect != "") printf "answer=$( (unset -f curl\n"
      next }
    inside && /^```$/ { inside = 0
      if (expect != "") printf ") || true)\necho \"$answer\" | jq -e --arg c %s '\''.error.code == $c'\'' >/dev/null || { echo \"expected %s, got: $answer\" >&2; exit 1; }\n", expect, expect
      next }
    inside { gsub(/http:\/\/localhost:3000/, url); print; next }
    /^[^[:space:]]/ { marked = 0 }
  ' README.md
  # What the README says the worked example ends with.
  echo 'curl -s "$API/subscribers/$SUB/balance" -H "$H" | jq -e '\''.data.balances == [{"currency": "USD", "balance": 1999, "open_invoices_due": 1999, "unallocated_credit": 0}]'\'' >/dev/null'
  echo 'curl -s "$API/invoices/$INV" -H "$H" | jq -e '\''.data | .status == "partially_paid" and .amount_paid == 3000'\'' >/dev/null'
  echo 'echo "--- README walkthrough: all blocks passed" >&2'
} >"$script"
blocks="$(grep -c '^echo "--- README block' "$script")"
[ "$blocks" -ge 3 ] || { echo "README walkthrough: found only $blocks marked blocks" >&2; exit 1; }
ADMIN_TOKEN="$ADMIN_TOKEN" bash "$script" 2>&1 | sed 's/^/  /' || { test_server_log; exit 1; }
echo "README walkthrough: $blocks blocks ran green against $API_URL"
