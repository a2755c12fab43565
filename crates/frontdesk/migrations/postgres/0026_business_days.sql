-- Each hotel's business date (docs/money.md, "End of day"; the local time its day ends is a billing setting). The row is made with the hotel's first
-- end of day: until then the business date is the hotel's local date. `lease_until`: a process closing the day
-- holds it, so that with several processes the day closes once (a lease that ran out, its process died, is taken
-- over). `last_run`: what the last close did, as the today page shows it (JSON).
CREATE TABLE hotel_business_days (
    hotel_id       UUID PRIMARY KEY REFERENCES hotels (id) ON DELETE CASCADE,
    business_date  DATE NOT NULL,
    lease_until    TIMESTAMPTZ,
    last_run_at    TIMESTAMPTZ,
    last_run       TEXT
);
