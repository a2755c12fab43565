-- The list's default order is by id (`GET /api/reservations`, with or without `hotelId`). Without an index that
-- reads one organization's or one hotel's reservations in id order, PostgreSQL walked the primary key from the start
-- and looked at every older reservation of the other hotels and organizations on the way, and SQLite read the whole
-- hotel and sorted it (docs/storage.md, "Built: lists in id order"). With these a page reads its own rows and stops
-- after the last.
CREATE INDEX reservations_hotel_ids ON reservations (organization_id, hotel_id, id);
CREATE INDEX reservations_organization_ids ON reservations (organization_id, id);
