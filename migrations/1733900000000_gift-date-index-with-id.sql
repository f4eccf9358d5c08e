-- Up Migration

-- A gift date range is read as the newest of its gifts by id (common/pagination/listPage.ts,
-- windowedPage): with the id in the index, the range's ids are read and sorted from the index
-- alone, and only the page's rows from the table. This replaces the index on
-- (institution_id, gift_date), whose every use it serves. On a large table, build it by hand
-- first with CREATE INDEX CONCURRENTLY under this name; the migration then only drops the old one.
CREATE INDEX IF NOT EXISTS gifts_institution_gift_date_id_idx ON gifts (institution_id, gift_date, id);
DROP INDEX gifts_institution_gift_date_idx;

-- Down Migration

CREATE INDEX gifts_institution_gift_date_idx ON gifts (institution_id, gift_date);
DROP INDEX gifts_institution_gift_date_id_idx;
