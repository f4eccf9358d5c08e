-- Up Migration

-- Campaign progress kept current in the write's transaction (fundraising.md §3): summing the
-- coded gift lines at read time costs a scan of every line of the campaign's tree (hundreds of
-- milliseconds at 200,000 lines), so writeGiftLines (campaigns/lines.ts), the one writer of
-- gift_lines, also applies each change of a gift's counted lines to these totals:
--
-- campaign_line_totals: per campaign, appeal and fund (a line's own campaign, not its
--   ancestors), the counted lines' base amounts net of refunds; a tree's `raised`, `by_appeal`
--   and `by_fund` sum its campaigns' rows, a handful of rows.
-- campaign_tree_gifts / campaign_tree_donors: per campaign and every campaign above it, the
--   gifts and donors with a counted line in its tree, with how many such lines: a tree's
--   gift_count and donor_count are the rows of its top campaign. A campaign moved in the tree
--   rebuilds these two for the institution (rebuildCampaignTreeCounts), under the tree's lock.
--
-- campaign_tree_counts: per campaign, how many rows it has in the two tables above (its tree's
--   gift_count and donor_count), changed by the write that adds or removes such a row: one
--   row per campaign is read, none counted. Writes coding gifts to one tree take turns on it.
--
-- A row whose lines fall to 0 is deleted by the write that empties it: only rows with lines
-- are kept, so the rows of a tree's top campaign are its gifts and donors.
CREATE TABLE campaign_line_totals (
  institution_id bigint NOT NULL,
  campaign_id bigint NOT NULL,
  appeal_id bigint,
  fund_id bigint,
  raised numeric(16, 2) NOT NULL,
  lines integer NOT NULL,
  CONSTRAINT campaign_line_totals_key
    UNIQUE NULLS NOT DISTINCT (institution_id, campaign_id, appeal_id, fund_id)
);

CREATE TABLE campaign_tree_gifts (
  institution_id bigint NOT NULL,
  ancestor_id bigint NOT NULL,
  gift_id bigint NOT NULL,
  lines integer NOT NULL,
  CONSTRAINT campaign_tree_gifts_pkey PRIMARY KEY (institution_id, ancestor_id, gift_id)
);

CREATE TABLE campaign_tree_donors (
  institution_id bigint NOT NULL,
  ancestor_id bigint NOT NULL,
  donor_id bigint NOT NULL,
  lines integer NOT NULL,
  CONSTRAINT campaign_tree_donors_pkey PRIMARY KEY (institution_id, ancestor_id, donor_id)
);

CREATE TABLE campaign_tree_counts (
  institution_id bigint NOT NULL,
  ancestor_id bigint NOT NULL,
  gift_count integer NOT NULL,
  donor_count integer NOT NULL,
  CONSTRAINT campaign_tree_counts_pkey PRIMARY KEY (institution_id, ancestor_id)
);

-- The totals of the lines written before this migration.
INSERT INTO campaign_line_totals (institution_id, campaign_id, appeal_id, fund_id, raised, lines)
SELECT institution_id, campaign_id, appeal_id, fund_id, sum(base_net), count(*)
FROM gift_lines WHERE counted AND campaign_id IS NOT NULL
GROUP BY institution_id, campaign_id, appeal_id, fund_id;

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

WITH RECURSIVE closure (institution_id, campaign_id, ancestor_id) AS (
  SELECT institution_id, id, id FROM campaigns
  UNION ALL
  SELECT c.institution_id, c.campaign_id, p.parent_id
  FROM closure c JOIN campaigns p ON p.institution_id = c.institution_id AND p.id = c.ancestor_id
  WHERE p.parent_id IS NOT NULL
)
INSERT INTO campaign_tree_donors (institution_id, ancestor_id, donor_id, lines)
SELECT l.institution_id, c.ancestor_id, l.donor_id, count(*)
FROM gift_lines l
JOIN closure c ON c.institution_id = l.institution_id AND c.campaign_id = l.campaign_id
WHERE l.counted
GROUP BY l.institution_id, c.ancestor_id, l.donor_id;

INSERT INTO campaign_tree_counts (institution_id, ancestor_id, gift_count, donor_count)
SELECT c.institution_id, c.id,
       (SELECT count(*) FROM campaign_tree_gifts g
        WHERE g.institution_id = c.institution_id AND g.ancestor_id = c.id),
       (SELECT count(*) FROM campaign_tree_donors d
        WHERE d.institution_id = c.institution_id AND d.ancestor_id = c.id)
FROM campaigns c;

-- Down Migration

DROP TABLE campaign_tree_counts;
DROP TABLE campaign_tree_donors;
DROP TABLE campaign_tree_gifts;
DROP TABLE campaign_line_totals;
