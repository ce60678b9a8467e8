# Sourced by scripts that need a throw-away server: `start_test_server` starts the built server (dist/main.js) on a
# fresh embedded database in a temp DATA_DIR on a free port, waits for /health/ready, and exports API_URL and
# ADMIN_TOKEN (a platform:admin token via API_BOOTSTRAP_TOKEN). The EXIT trap stops it and removes the folder.
# Needs `npm run build` first.

TEST_SERVER_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
TEST_SERVER_PID=""
TEST_SERVER_DIR=""

stop_test_server() {
  if [ -n "$TEST_SERVER_PID" ] && kill -0 "$TEST_SERVER_PID" 2>/dev/null; then
    kill -TERM "$TEST_SERVER_PID" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$TEST_SERVER_PID" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$TEST_SERVER_PID" 2>/dev/null || true
  fi
  TEST_SERVER_PID=""
  if [ -n "$TEST_SERVER_DIR" ]; then rm -rf "$TEST_SERVER_DIR"; fi
  TEST_SERVER_DIR=""
}

test_server_log() {
  if [ -n "$TEST_SERVER_DIR" ] && [ -f "$TEST_SERVER_DIR/server.log" ]; then tail -n 40 "$TEST_SERVER_DIR/server.log" >&2; fi
}

start_test_server() {
  if [ ! -f "$TEST_SERVER_ROOT/dist/main.js" ]; then
    echo "dist/main.js is missing: run npm run build first" >&2
    return 1
  fi
  TEST_SERVER_DIR="$(mktemp -d "${TMPDIR:-/tmp}/isp-api-test.XXXXXX")"
  trap stop_test_server EXIT
  trap 'exit 130' INT TERM
  local port
  port="$(node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); });')"
  export API_URL="http://127.0.0.1:$port"
  export ADMIN_TOKEN="isk_test_$(node -e 'console.log(require("crypto").randomBytes(24).toString("hex"))')"
  (
    cd "$TEST_SERVER_ROOT"
    exec env -u DATABASE_URL -u REDIS_URL PORT="$port" DATA_DIR="$TEST_SERVER_DIR/data" EMBEDDED_DATABASE=true \
      API_BOOTSTRAP_TOKEN="$ADMIN_TOKEN" LOG_LEVEL="${TEST_SERVER_LOG_LEVEL:-warn}" WEBHOOK_WORKER_ENABLED=false \
      BILLING_SCHEDULER_ENABLED=false \
      node dist/main.js
  ) >"$TEST_SERVER_DIR/server.log" 2>&1 </dev/null &
  TEST_SERVER_PID=$!
  for _ in $(seq 1 120); do
    if curl -fsS "$API_URL/health/ready" >/dev/null 2>&1; then return 0; fi
    if ! kill -0 "$TEST_SERVER_PID" 2>/dev/null; then break; fi
    sleep 0.5
  done
  echo "the server did not become ready on $API_URL" >&2
  test_server_log
  return 1
}

# The scripts use curl and jq; a machine without them gets them from Debian's packages when it can.
require_tools() {
  local missing=()
  for tool in "$@"; do command -v "$tool" >/dev/null 2>&1 || missing+=("$tool"); done
  [ "${#missing[@]}" -eq 0 ] && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "install ${missing[*]} first" >&2
    return 1
  fi
}
