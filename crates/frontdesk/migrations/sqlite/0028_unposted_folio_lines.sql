-- The end of day posts a hotel's unposted folio lines dated through its business date (store/business_days.rs,
-- `post_through`). Every close posts all of them, so the lines unposted and dated through a business date are about a
-- day's lines of the hotels not closed yet; without an index they were found from the hotel's folios, every one of its
-- reservations, past and future. The index is on the date a line has while it is unposted (NULL once posted), an
-- expression rather than a partial index: PostgreSQL keeps statistics of an index's expression and so knows the range
-- is small, where it takes `posted_at IS NULL` and a date range as independent. The same on both engines.
CREATE INDEX folio_lines_unposted ON folio_lines ((CASE WHEN posted_at IS NULL THEN service_date END));
