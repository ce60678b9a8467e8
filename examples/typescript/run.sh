#!/usr/bin/env bash
# CI for the example integration: install its pinned dependencies, generate the client from the document the built
# server serves (a contract change that breaks clients fails here), typecheck strictly, then run the sync three times
# against a fresh embedded server and check that only the first created anything. Needs `npm run build` at the root first.
set -euo pipefail
cd "$(dirname "$0")"
# shellcheck source=../../scripts/lib/test-server.sh
source ../../scripts/lib/test-server.sh
require_tools curl jq

npm ci --no-audit --no-fund --loglevel=error

start_test_server
echo "server on $API_URL"

# The document this build generates; `npm run openapi -- --check` (in .ci/run) holds the committed one to it.
curl -fsS "$API_URL/docs/openapi.json" -o "$TEST_SERVER_DIR/openapi.json"
OPENAPI_DOCUMENT="$TEST_SERVER_DIR/openapi.json" npm run -s generate
npx tsc --noEmit
echo "typecheck: ok (strict)"
# A second generator on the same document: @hey-api/openapi-ts's client and a scenario that must compile (--strict).
(
  cd ../typescript-heyapi
  npm ci --no-audit --no-fund --loglevel=error
  OPENAPI_DOCUMENT="$TEST_SERVER_DIR/openapi.json" npm run -s generate >/dev/null
  npx tsc --noEmit
)
echo "typecheck (hey-api): ok (strict)"

# Tokens with only the scopes the README tells an integrator to ask for. Idempotency keys are kept per token, so the
# third run (another token) misses every key, as a re-run after the keys' 24 hours would, and must find the
# records by their natural keys instead (409 duplicate_subscriber / duplicate_transaction, the invoice lookup).
new_token() {
  curl -fsS -X POST "$API_URL/api/v1/tokens" -H "Authorization: Bearer $ADMIN_TOKEN" -H 'Content-Type: application/json' \
    -d "{\"name\": \"example sync $1\", \"scopes\": [\"subscribers:*\", \"billing:*\", \"events:read\"]}" | jq -r .data.token
}
export ISP_API_URL="$API_URL" ISP_EVENTS_PAGE_SIZE=7
sync() {
  ISP_API_TOKEN="$1" npm run -s sync >"$TEST_SERVER_DIR/$2.jsonl" || { test_server_log; exit 1; }
  cat "$TEST_SERVER_DIR/$2.jsonl"
}
first_token="$(new_token 1)"
second_token="$(new_token 2)"
sync "$first_token" run1
events_before="$(curl -fsS "$API_URL/api/v1/events?limit=100" -H "Authorization: Bearer $ADMIN_TOKEN" | jq '.data | length')"
sync "$first_token" run2
sync "$second_token" run3

fail() { echo "example integration: $*" >&2; exit 1; }
summary() { jq -c 'select(.kind == "summary")' "$TEST_SERVER_DIR/$1.jsonl"; }
events() { jq -c 'select(.kind == "events")' "$TEST_SERVER_DIR/$1.jsonl"; }
s1="$(summary run1)" s2="$(summary run2)" s3="$(summary run3)"
rows="$(jq -r .rows <<<"$s1")"
[ "$(jq -r .subscribers.created <<<"$s1")" = "$rows" ] || fail "run 1 did not create all $rows subscribers: $s1"
[ "$(jq -r '[.invoices, .payments][].created | select(. == 0)' <<<"$s1")" = "" ] || fail "run 1 created no invoice or payment: $s1"
[ "$(jq -r .allocated <<<"$s1")" -gt 0 ] || fail "run 1 allocated nothing: $s1"
[ "$(jq -r '.pages' <<<"$(events run1)")" -gt 1 ] || fail "run 1 read the event log in one page: the cursor went unused"
for run in 2 3; do
  s="$(summary "run$run")"
  [ "$(jq -r '[.subscribers, .invoices, .payments][].created' <<<"$s" | sort -u)" = "0" ] || fail "run $run created something: $s"
  [ "$(jq -r .allocated <<<"$s")" = "0" ] || fail "run $run allocated again: $s"
  [ "$(jq -r '.subscribers.replayed + .subscribers.existing' <<<"$s")" = "$rows" ] || fail "run $run: $s"
  [ "$(jq -r .total <<<"$(events "run$run")")" = "$(jq -r .total <<<"$(events run1)")" ] ||
    fail "run $run wrote events: $(events run1) then $(events "run$run")"
done
[ "$(jq -r .subscribers.replayed <<<"$s2")" = "$rows" ] || fail "run 2 (same token) should replay every create: $s2"
[ "$(jq -r .subscribers.existing <<<"$s3")" = "$rows" ] || fail "run 3 (other token) should find every subscriber: $s3"
[ "$(jq -r .payments.existing <<<"$s3")" = "$(jq -r .payments.created <<<"$s1")" ] || fail "run 3 payments: $s3"
events_after="$(curl -fsS "$API_URL/api/v1/events?limit=100" -H "Authorization: Bearer $ADMIN_TOKEN" | jq '.data | length')"
[ "$events_before" = "$events_after" ] || fail "runs 2 and 3 wrote events ($events_before before, $events_after after)"
count="$(curl -fsS "$API_URL/api/v1/subscribers?limit=100" -H "Authorization: Bearer $ADMIN_TOKEN" | jq '.data | length')"
[ "$count" = "$rows" ] || fail "$count subscribers on the server after three runs of $rows rows"
echo "example integration: ok"
echo "  run 1: $s1"
echo "  run 2: $s2"
echo "  run 3: $s3"
