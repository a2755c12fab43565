#!/usr/bin/env bash
# Runs Schemathesis (every check) against a fresh demo server's /api/openapi.json, authenticated with the demo's
# API key. Fails on any finding. Usage: scripts/schemathesis.sh [path/to/frontdesk]
set -euo pipefail
cd "$(dirname "$0")/.."

bin=${1:-${CARGO_TARGET_DIR:-target}/debug/frontdesk}
venv=${FRONTDESK_SCHEMATHESIS_VENV:-$HOME/.cache/frontdesk/schemathesis-venv}
# Pinned, so that CI's verdict changes only when our code does; raise both together, on purpose.
pins=(schemathesis==4.32.5 hypothesis==6.170.17)
if ! "$venv/bin/pip" freeze --disable-pip-version-check 2>/dev/null | grep -qx "${pins[0]}" ||
  ! "$venv/bin/pip" freeze --disable-pip-version-check 2>/dev/null | grep -qx "${pins[1]}"; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check "${pins[@]}"
fi

work=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
# Schemathesis sends thousands of requests a minute: lift the rate limits (tested on their own) for this run.
FRONTDESK_DATABASE_URL="sqlite://$work/demo.db" FRONTDESK_LOG=warn FRONTDESK_RATE_LIMIT_PER_MINUTE=1000000 \
  FRONTDESK_OPERATOR_RATE_LIMIT_PER_MINUTE=1000000 FRONTDESK_PUBLIC_RATE_LIMIT_PER_MINUTE=1000000 \
  FRONTDESK_SIGN_IN_RATE_LIMIT_PER_MINUTE=1000000 \
  "$bin" serve --demo --listen "127.0.0.1:$port" >"$work/demo.out" 2>"$work/demo.err" &
server=$!
trap 'kill $server 2>/dev/null || true; wait $server 2>/dev/null || true; rm -rf "$work"' EXIT

for _ in $(seq 1 100); do
  curl -fs "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break
  sleep 0.1
done
secret=$(grep -o 'fdk_[A-Za-z0-9_-]*' "$work/demo.out" | head -n 1)
[ -n "$secret" ] || { echo "the demo printed no API key" >&2; cat "$work/demo.out" "$work/demo.err" >&2; exit 1; }
basic=$(printf '%s' "$secret" | base64 -w0)

# One worker: Schemathesis's workers are threads, and Hypothesis parses source with Python's `ast` to describe its
# strategies; on Python 3.11 two threads doing so at once can fail with "AST constructor recursion depth mismatch"
# (python/cpython#106905), a runtime error of the tool that failed a CI run while every generated case had passed.
run() {
  "$venv/bin/schemathesis" --config-file schemathesis.toml run "http://127.0.0.1:$port/api/openapi.json" \
    --checks all \
    --max-examples "${SCHEMATHESIS_MAX_EXAMPLES:-50}" \
    --workers 1 \
    --no-color \
    "$@"
}

# Signed in before the runs: their wrong sign-ins (from this address) soon make every further attempt wait.
token=$(curl -fs -X POST "http://127.0.0.1:$port/api/auth/login" -H 'Content-Type: application/json' \
  -d '{"email":"demo@frontdesk.local","password":"frontdesk-demo"}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])')

echo "-- as the demo API key (every scope)"
run --header "Authorization: Basic $basic"

echo "-- as the demo operator (access token; logout left out so the token lives through the run)"
run --header "Authorization: Token $token" --exclude-path /api/auth/logout
