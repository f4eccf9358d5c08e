-- Up Migration

-- What a coded gift's create cost beyond a plain one (bench:fundraising), cut to what progress
-- reads:
--
-- gift_lines lose their foreign key to gifts. Its check ran once per line, locking the gift row
-- the same statement had just inserted (a row lock and its WAL record per gift), which was the
-- largest part of that cost. A gift's lines are written only from the gift itself, in the
-- transaction that inserts or holds it (writeGiftLines, newLinesSteps in campaigns/lines.ts), so
-- there is never a line of a gift that is not there; what the key's ON DELETE CASCADE did, a
-- trigger does: a deleted gift's lines go with it, in its statement.
ALTER TABLE gift_lines DROP CONSTRAINT gift_lines_gift_fkey;

CREATE FUNCTION gift_lines_follow_deleted_gifts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM gift_lines l USING removed_gifts g
  WHERE l.institution_id = g.institution_id AND l.gift_id = g.id;
  RETURN NULL;
END
$$;

CREATE TRIGGER gift_lines_after_gift_delete AFTER DELETE ON gifts
  REFERENCING OLD TABLE AS removed_gifts
  FOR EACH STATEMENT EXECUTE FUNCTION gift_lines_follow_deleted_gifts();

-- campaign_tree_gifts held a row per gift and campaign above its lines, only to tell whether a
-- write added a gift to a tree or took one out; the gift's own lines before and after the write
-- tell that (a gift is in a tree while it has a counted line there), so each create no longer
-- inserts those rows. campaign_tree_counts.gift_count stays as it was.
DROP TABLE campaign_tree_gifts;

-- Down Migration

CREATE TABLE campaign_tree_gifts (
  institution_id bigint NOT NULL,
  ancestor_id bigint NOT NULL,
  gift_id bigint NOT NULL,
  lines integer NOT NULL,
  CONSTRAINT campaign_tree_gifts_pkey PRIMARY KEY (institution_id, ancestor_id, gift_id)
);

WITH RECURSIVE closure (institution_id, campaign_id, ancestor_id) AS (
  SELECT institution_id, id, id FROM campaigns
  UNION ALL
  SELECT c.institution_id, c.campaign_id, p.parent_id
  FROM closure c JOIN campaigns p ON p.institution_id = c.institution_id AND p.id = c.ancestor_id
  WHERE p.parent_id IS NOT NULL
)
INSERT INTO campaign_tree_gifts (institution_id, ancestor_id, gift_id, lines)
SELECT l.institution_id, c.ancestor_id, l.gift_id, count(*)
FROM gift_lines l
JOIN closure c ON c.institution_id = l.institution_id AND c.campaign_id = l.campaign_id
WHERE l.counted
GROUP BY l.institution_id, c.ancestor_id, l.gift_id;

DROP TRIGGER gift_lines_after_gift_delete ON gifts;
DROP FUNCTION gift_lines_follow_deleted_gifts();

ALTER TABLE gift_lines ADD CONSTRAINT gift_lines_gift_fkey FOREIGN KEY (institution_id, gift_id)
  REFERENCES gifts (institution_id, id) ON DELETE CASCADE;
