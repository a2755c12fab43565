-- The sites that may show a hotel's public booking page in a frame (the page's CSP frame-ancestors): origins such
-- as https://www.example-hotel.com, separated by single spaces; empty when no site may.
ALTER TABLE hotels ADD COLUMN booking_embed_origins TEXT NOT NULL DEFAULT '';
