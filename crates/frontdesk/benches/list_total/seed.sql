INSERT INTO organizations VALUES ('org-1', 'Bench', '2026-01-01T00:00:00.000000Z');
INSERT INTO hotels (id, organization_id, name, timezone, currency, check_in_time, check_out_time, public_booking, created_at, updated_at)
  SELECT 'hotel-' || lpad(h::text, 2, '0'), 'org-1', 'Hotel ' || h, 'UTC', 'EUR', '15:00', '11:00', 0, '2026-01-01T00:00:00.000000Z', '2026-01-01T00:00:00.000000Z'
  FROM generate_series(1, 20) h;
INSERT INTO reservations (id, organization_id, hotel_id, guest_id, status, check_in_date, check_out_date, nights, start_time, end_time,
    adults, children, infants, total_price, currency, source, channel_reference, notes, created_at, updated_at, reference)
  SELECT 'r-' || lpad(i::text, 8, '0'), 'org-1', 'hotel-' || lpad((1 + i % 20)::text, 2, '0'), NULL,
    (ARRAY['CONFIRMED','CONFIRMED','CONFIRMED','CHECKED_OUT','CANCELLED','REQUESTED'])[1 + i % 6],
    to_char(date '2025-01-01' + (i % 1095), 'YYYY-MM-DD'), to_char(date '2025-01-01' + (i % 1095) + 3, 'YYYY-MM-DD'), 3,
    to_char(date '2025-01-01' + (i % 1095), 'YYYY-MM-DD') || 'T15:00:00.000000Z', to_char(date '2025-01-01' + (i % 1095) + 3, 'YYYY-MM-DD') || 'T11:00:00.000000Z',
    2, 0, 0, 30000, 'EUR', 'DIRECT', NULL, NULL, '2026-01-01T00:00:00.000000Z', '2026-01-01T00:00:00.000000Z', NULL
  FROM generate_series(1, 1000000) i;
WITH folded AS (DELETE FROM reservation_count_changes RETURNING organization_id, hotel_id, status, delta)
INSERT INTO reservation_counts (organization_id, hotel_id, status, n)
SELECT organization_id, hotel_id, status, SUM(delta) FROM folded GROUP BY organization_id, hotel_id, status
ON CONFLICT (organization_id, hotel_id, status) DO UPDATE SET n = reservation_counts.n + EXCLUDED.n;
VACUUM ANALYZE;
