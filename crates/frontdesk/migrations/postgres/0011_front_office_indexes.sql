-- The dashboard's reservation lists at a million reservations: a hotel's stays in one status (in house, booking
-- requests, a status filter), and the sort orders the list offers besides check-in (check-out, booked on), each in
-- the order the page reads it so that a page stops after its last row.
CREATE INDEX reservations_hotel_status ON reservations (organization_id, hotel_id, status, check_in_date, id);
CREATE INDEX reservations_hotel_check_out ON reservations (organization_id, hotel_id, check_out_date, id);
CREATE INDEX reservations_hotel_created ON reservations (organization_id, hotel_id, created_at, id);
-- Finding a guest by the start of a first or last name, whatever its case.
CREATE INDEX guests_last_name ON guests (organization_id, lower(last_name));
CREATE INDEX guests_first_name ON guests (organization_id, lower(first_name));
