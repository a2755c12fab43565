-- A stay exempt from the city tax (docs/money.md, "City tax"): why (business travel, say), as the desk recorded it.
-- While set, the stay's unposted city-tax lines are not made; posted ones stay and are corrected by allowances.
ALTER TABLE folios ADD COLUMN city_tax_exempt_reason TEXT;
