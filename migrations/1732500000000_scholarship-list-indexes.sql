-- Up Migration

-- Indexes for the filters of GET /award-cycles, /students, /scholarships, /awards and the
-- scholarship reports. Every index leads with institution_id, as every list query does. Already
-- served by 1732300000000_scholarships.sql: award cycles by status (institution_id, status, id),
-- scholarships by fund (institution_id, fund_id, id), awards by cycle, scholarship and student
-- ((institution_id, <column>, id) each).

-- Both extensions are created by 1732400000000_list-indexes.sql; repeated here so that this file
-- does not depend on that one's contents.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE EXTENSION IF NOT EXISTS btree_gin;

-- q (contains, case-insensitive, ILIKE): trigram indexes, so a rare or absent word is answered
-- without reading every row of the institution. A student's q searches one text, built by
-- exactly the expression of common/resources/students/list.ts (an OR over several columns was
-- planned as a scan of the whole institution).
CREATE INDEX award_cycles_institution_name_trgm_idx ON award_cycles
  USING gin (institution_id, name gin_trgm_ops);
CREATE INDEX students_institution_search_trgm_idx ON students
  USING gin (institution_id,
    (first_name || ' ' || last_name || chr(31) || student_number || chr(31) || coalesce(email, ''))
    gin_trgm_ops);
CREATE INDEX scholarships_institution_name_trgm_idx ON scholarships
  USING gin (institution_id, name gin_trgm_ops);

-- status: an exact keyset scan, newest first, however rare the status.
CREATE INDEX scholarships_institution_status_idx ON scholarships (institution_id, status, id);
CREATE INDEX awards_institution_status_idx ON awards (institution_id, status, id);

-- The reports read only awarded awards (accepted or disbursed; the predicate is the literal one
-- of common/resources/scholarships/reports.ts, so the planner can match it).
-- GET /scholarships/awarded-students?award_cycle_id=: a keyset scan of the cycle's awarded
-- awards, newest first, that never reads an offered, declined or cancelled one.
CREATE INDEX awards_awarded_cycle_idx ON awards (institution_id, award_cycle_id, id)
  WHERE status IN ('accepted', 'disbursed');
-- ... with scholarship_id: the same scan narrowed to one scholarship; and the per-fund aggregate
-- of GET /scholarships/fund-summaries (a fund's scholarships, then each one's awards in the cycle).
CREATE INDEX awards_awarded_scholarship_cycle_idx
  ON awards (institution_id, scholarship_id, award_cycle_id, id)
  WHERE status IN ('accepted', 'disbursed');

-- Down Migration

-- The extensions stay: they may have existed before, and other objects use them.
DROP INDEX awards_awarded_scholarship_cycle_idx;
DROP INDEX awards_awarded_cycle_idx;
DROP INDEX awards_institution_status_idx;
DROP INDEX scholarships_institution_status_idx;
DROP INDEX scholarships_institution_name_trgm_idx;
DROP INDEX students_institution_search_trgm_idx;
DROP INDEX award_cycles_institution_name_trgm_idx;
