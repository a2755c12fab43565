#!/usr/bin/env bash
# Makes sure the PostgreSQL and Redis that the test suite uses answer on 127.0.0.1, that the browser tests have
# Chromium and ChromeDriver, and that the invoice PDF tests have qpdf and pdftotext, installing them from Debian's
# packages when the machine has none. Run by .ci/run; safe to run by hand.
set -euo pipefail

have() { command -v "$1" >/dev/null 2>&1; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

ensure_postgres() {
  if pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then return 0; fi
  if ! ls /etc/postgresql/*/main >/dev/null 2>&1; then
    echo "installing PostgreSQL" >&2
    as_root apt-get update -qq && as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
    # Trust local TCP connections, as the test suite expects (user postgres, no password).
    for hba in /etc/postgresql/*/main/pg_hba.conf; do
      as_root sed -i -E 's/^(host\s+all\s+all\s+127\.0\.0\.1\/32\s+)\S+/\1trust/; s/^(local\s+all\s+postgres\s+)\S+/\1trust/' "$hba"
    done
  fi
  local version
  version=$(ls /etc/postgresql | sort -V | tail -n 1)
  as_root pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
  for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 1; done
  pg_isready -h 127.0.0.1 -p 5432
  psql -h 127.0.0.1 -U postgres -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = 'test'" | grep -q 1 \
    || psql -h 127.0.0.1 -U postgres -d postgres -c "CREATE DATABASE test" >/dev/null
}

ensure_redis() {
  if have redis-cli && redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null | grep -q PONG; then return 0; fi
  if ! have redis-server; then
    echo "installing Redis" >&2
    as_root apt-get update -qq && as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
  fi
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no >/dev/null
  for _ in $(seq 1 30); do redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null | grep -q PONG && break; sleep 1; done
  redis-cli -h 127.0.0.1 -p 6379 ping
}

# The dashboard's and booking page's browser tests drive a headless Chromium over WebDriver.
ensure_chromium() {
  if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then return 0; fi
  echo "installing Chromium and ChromeDriver" >&2
  as_root apt-get update -qq && as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
  /usr/bin/chromedriver --version
}

# The invoice PDF tests (documents/invoice_pdf.rs) check each file with `qpdf --check` and read its text back
# with `pdftotext` (poppler-utils).
ensure_pdf_tools() {
  if have qpdf && have pdftotext; then return 0; fi
  echo "installing qpdf and poppler-utils" >&2
  as_root apt-get update -qq && as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq qpdf poppler-utils >/dev/null
  qpdf --version | head -n 1
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  ensure_postgres
  ensure_redis
  ensure_chromium
  ensure_pdf_tools
fi
