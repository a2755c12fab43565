-- Ids are UUIDs (native `uuid` since migration 0021), made from the row's number so that a hotel's ids are easy to
-- name in run.sh: the organization ends in 1, hotel h in 1hh, reservation i in i.
INSERT INTO organizations VALUES ('00000000-0000-7000-8000-000000000001', 'Bench', '2026-01-01T00:00:00Z');
INSERT INTO hotels (id, organization_id, name, timezone, currency, check_in_time, check_out_time, public_booking, created_at, updated_at)
  SELECT ('00000000-0000-7000-8000-0000000001' || lpad(h::text, 2, '0'))::uuid, '00000000-0000-7000-8000-000000000001',
    'Hotel ' || h, 'UTC', 'EUR', '15:00', '11:00', FALSE, '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z'
  FROM generate_series(1, 20) h;
INSERT INTO reservations (id, organization_id, hotel_id, guest_id, status, check_in_date, check_out_date, nights, start_time, end_time,
    adults, children, infants, total_price, currency, source, channel_reference, notes, created_at, updated_at, reference)
  SELECT ('00000001-0000-7000-8000-' || lpad(i::text, 12, '0'))::uuid, '00000000-0000-7000-8000-000000000001',
    ('00000000-0000-7000-8000-0000000001' || lpad((1 + i % 20)::text, 2, '0'))::uuid, NULL,
    (ARRAY['CONFIRMED','CONFIRMED','CONFIRMED','CHECKED_OUT','CANCELLED','REQUESTED'])[1 + i % 6],
    date '2025-01-01' + (i % 1095), date '2025-01-01' + (i % 1095) + 3, 3,
    (date '2025-01-01' + (i % 1095) + time '15:00') AT TIME ZONE 'UTC',
    (date '2025-01-01' + (i % 1095) + 3 + time '11:00') AT TIME ZONE 'UTC',
    2, 0, 0, 30000, 'EUR', 'DIRECT', NULL, NULL, '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z', NULL
  FROM generate_series(1, 1000000) i;
WITH folded AS (DELETE FROM reservation_count_changes RETURNING organization_id, hotel_id, status, delta)
INSERT INTO reservation_counts (organization_id, hotel_id, status, n)
SELECT organization_id, hotel_id, status, SUM(delta) FROM folded GROUP BY organization_id, hotel_id, status
ON CONFLICT (organization_id, hotel_id, status) DO UPDATE SET n = reservation_counts.n + EXCLUDED.n;
VACUUM ANALYZE;
