-- Up Migration

-- Indexes for the filters of GET /gifts. `donor_id` and `fund_id` are served already by
-- (institution_id, donor_id, id) and (institution_id, fund_id, id); `npm run bench:lists` prints
-- the plans. Every index leads with institution_id, as every list query does.

-- type: an exact keyset scan, newest first, at any depth, however rare the type.
CREATE INDEX gifts_institution_type_idx ON gifts (institution_id, type, id);

-- gift_date_from / gift_date_to: a narrow range reads only its own rows (a bitmap scan, then the
-- newest of them by id) instead of walking the institution's gifts until it finds them.
CREATE INDEX gifts_institution_gift_date_idx ON gifts (institution_id, gift_date);

-- q (subject contains, case-insensitive, ILIKE): a trigram index, so a rare or absent word is
-- answered without reading every gift of the institution. Both extensions ship with PostgreSQL
-- (contrib) and are trusted since PostgreSQL 13: the database owner may create them. btree_gin
-- lets the GIN index lead with institution_id.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE EXTENSION IF NOT EXISTS btree_gin;
CREATE INDEX gifts_institution_subject_trgm_idx ON gifts
  USING gin (institution_id, subject gin_trgm_ops);

-- Down Migration

-- The extensions stay: they may have existed before, and other objects may use them.
DROP INDEX gifts_institution_subject_trgm_idx;
DROP INDEX gifts_institution_gift_date_idx;
DROP INDEX gifts_institution_type_idx;
