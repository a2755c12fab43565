-- Which channel booking became which reservation of a hotel (docs/channels.md), kept apart from a connection's
-- revision record: a hotel that disconnects and connects again still finds the reservation of a booking taken
-- before when the channel modifies or cancels it. Goes with its reservation.
CREATE TABLE channel_bookings (
    hotel_id       UUID NOT NULL,
    channel        TEXT NOT NULL,
    booking_id     TEXT NOT NULL,
    reservation_id UUID NOT NULL REFERENCES reservations (id) ON DELETE CASCADE,
    PRIMARY KEY (hotel_id, channel, booking_id)
);
CREATE INDEX channel_bookings_reservation ON channel_bookings (reservation_id);

-- The bookings taken so far.
INSERT INTO channel_bookings (hotel_id, channel, booking_id, reservation_id)
SELECT DISTINCT ON (c.hotel_id, c.channel, v.booking_id) c.hotel_id, c.channel, v.booking_id, v.reservation_id
FROM channel_revisions v
JOIN channel_connections c ON c.id = v.connection_id
JOIN reservations r ON r.id = v.reservation_id
WHERE v.outcome = 'applied'
ORDER BY c.hotel_id, c.channel, v.booking_id, v.recorded_at DESC;
