#!/usr/bin/env bash
# The reservation list's total on PostgreSQL, read from the counts (migration 0020) against counted, measured as the
# database's own time per statement: pgbench runs the list statement the service sends for
# `GET /api/reservations?hotelId=…&limit=50` (50 rows, organization and hotel, with its total) on 1,000,000
# reservations over 20 hotels, in three forms, alternating, each twice:
#   counted  the total as a COUNT(*) subquery (what the list did before, and still does for other filters);
#   counts   the total from reservation_counts plus the changes not folded yet (what it does now);
#   page     the page alone, no total: the floor.
# Then the counts form again with 40,000 changes not folded (2,000 per hotel: a fold every 2 s under about 20,000
# writes a second).
#
# Usage: bash crates/frontdesk/benches/list_total/run.sh [path/to/frontdesk]   (default: the debug build)
# Needs PostgreSQL at FRONTDESK_BENCH_PG (default postgres://postgres@127.0.0.1:5432) and pgbench; makes and drops
# the database frontdesk_list_total.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
binary="${1:-${CARGO_TARGET_DIR:-target}/debug/frontdesk}"
server="${FRONTDESK_BENCH_PG:-postgres://postgres@127.0.0.1:5432}"
db=frontdesk_list_total
seconds="${LIST_TOTAL_SECONDS:-8}"

psql "$server/postgres" -qc "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
trap 'psql "$server/postgres" -qc "DROP DATABASE IF EXISTS $db"' EXIT
"$binary" migrate --database-url "$server/$db" >/dev/null 2>&1
echo "seeding 1,000,000 reservations (about a minute)"
psql "$server/$db" -q -v ON_ERROR_STOP=1 -f "$here/seed.sql" >/dev/null

columns="id, hotel_id, guest_id, status, check_in_date, check_out_date, start_time, end_time, adults, children, \
infants, total_price, currency, source, channel_reference, notes, created_at, updated_at, reference"
# The hotel is looked up once per statement (an InitPlan), as the service binds its id: an expression over :h would
# be computed again for every row the count scans.
where="organization_id = '00000000-0000-7000-8000-000000000001' AND hotel_id = (SELECT id FROM hotels WHERE name = 'Hotel ' || :h)"
scripts=$(mktemp -d)
printf '\\set h random(1, 20)\nSELECT %s, (SELECT COUNT(*) FROM reservations WHERE %s) AS total_count FROM reservations WHERE %s ORDER BY id LIMIT 50 OFFSET 0;\n' \
  "$columns" "$where" "$where" > "$scripts/counted.sql"
printf '\\set h random(1, 20)\nSELECT %s, (SELECT CAST(COALESCE(SUM(n), 0) AS BIGINT) FROM (SELECT n AS n FROM reservation_counts WHERE %s UNION ALL SELECT delta AS n FROM reservation_count_changes WHERE %s) AS counted) AS total_count FROM reservations WHERE %s ORDER BY id LIMIT 50 OFFSET 0;\n' \
  "$columns" "$where" "$where" "$where" > "$scripts/counts.sql"
printf '\\set h random(1, 20)\nSELECT %s FROM reservations WHERE %s ORDER BY id LIMIT 50 OFFSET 0;\n' \
  "$columns" "$where" > "$scripts/page.sql"

latency() {
  pgbench "$server/$db" -n -M prepared -c 1 -T "$seconds" -f "$scripts/$1.sql" 2>/dev/null \
    | sed -n 's/^latency average = \([0-9.]*\) ms$/\1/p'
}
declare -A sum
for round in 1 2; do
  for form in counted counts page; do
    ms=$(latency "$form")
    sum[$form]=$(awk -v a="${sum[$form]:-0}" -v b="$ms" 'BEGIN { print a + b }')
    printf 'round %s  %-8s %8.3f ms per statement\n' "$round" "$form" "$ms"
  done
done
awk -v a="${sum[counted]}" -v b="${sum[counts]}" -v c="${sum[page]}" 'BEGIN {
  printf "mean     counted %.3f ms, counts %.3f ms, page %.3f ms: counts is %.1fx cheaper than counted, %.2fx the page alone\n",
    a / 2, b / 2, c / 2, a / b, b / c }'

psql "$server/$db" -qc "INSERT INTO reservation_count_changes SELECT '00000000-0000-7000-8000-000000000001', \
  ('00000000-0000-7000-8000-0000000001' || lpad((1 + i % 20)::text, 2, '0'))::uuid, \
  (ARRAY['CONFIRMED','CANCELLED','REQUESTED'])[1 + i % 3], CASE WHEN i % 2 = 0 THEN 1 ELSE -1 END \
  FROM generate_series(1, 40000) i; ANALYZE reservation_count_changes;"
printf 'counts with 40,000 changes not folded: %.3f ms per statement (page alone %.3f ms)\n' "$(latency counts)" "$(latency page)"
