-- Up Migration

-- GET /donors/{id} sums a donor's (or a household's) posted gifts. Read through
-- gifts_institution_donor_idx or a scan, every one of those gifts is a heap row, and a gift row
-- has grown wide (base amounts, codes, tribute, designations with their base amounts): about 12
-- rows a page, so 10,000 gifts were some 1,300 pages per read. The figures it needs ride in this
-- index, so the read is an index-only scan of a few dozen pages (where the visibility map says
-- the pages are all visible, which vacuum keeps so).
CREATE INDEX gifts_donor_giving_idx ON gifts (institution_id, donor_id)
  INCLUDE (gift_date, base_amount, base_amount_refunded)
  WHERE status = 'posted';

-- Down Migration

DROP INDEX gifts_donor_giving_idx;
