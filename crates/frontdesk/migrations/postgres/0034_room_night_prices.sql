-- Each room's price night by night (docs/money.md, "Room nights"): a JSON object of the stay's nights and their
-- prices in minor units, as the rate plan priced them or as a channel sold them. The folio charges each night its
-- own price while the nights are exactly the stay's and add up to the room's price; otherwise (a price given for the
-- whole stay, dates changed since) the room's price is spread evenly over the nights. NULL: no prices per night.
ALTER TABLE reservation_rooms ADD COLUMN night_prices TEXT;
