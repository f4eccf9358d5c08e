-- Up Migration

-- Campaign and appeal codes on gifts, pledges and recurring gifts (fundraising.md §3). A record
-- carries `campaign_id` and `appeal_id`; each designation (a jsonb part) may carry its own keys
-- `campaign_id` and `appeal_id`, which win over the record's. The record-level codes are real
-- foreign keys; the designations' codes are held by the arrays below and by the write's locks.

ALTER TABLE gifts
  ADD COLUMN campaign_id bigint,
  ADD COLUMN appeal_id bigint,
  -- The effective codes of the gift's lines (a designation's own, else the gift's; a line coded
  -- only to an appeal takes the appeal's campaign), written with the gift as fund_ids is: what
  -- GET /gifts?campaign_id=&appeal_id= and a campaign's or an appeal's delete read.
  ADD COLUMN campaign_ids bigint[] NOT NULL DEFAULT '{}',
  ADD COLUMN appeal_ids bigint[] NOT NULL DEFAULT '{}',
  ADD CONSTRAINT gifts_campaign_fkey FOREIGN KEY (institution_id, campaign_id)
    REFERENCES campaigns (institution_id, id),
  ADD CONSTRAINT gifts_appeal_fkey FOREIGN KEY (institution_id, appeal_id)
    REFERENCES appeals (institution_id, id);
CREATE INDEX gifts_campaign_ids_idx ON gifts USING gin (campaign_ids) WHERE campaign_ids <> '{}';
CREATE INDEX gifts_appeal_ids_idx ON gifts USING gin (appeal_ids) WHERE appeal_ids <> '{}';

ALTER TABLE pledges
  ADD COLUMN campaign_id bigint,
  ADD COLUMN appeal_id bigint,
  ADD COLUMN campaign_ids bigint[] NOT NULL DEFAULT '{}',
  ADD COLUMN appeal_ids bigint[] NOT NULL DEFAULT '{}',
  ADD CONSTRAINT pledges_campaign_fkey FOREIGN KEY (institution_id, campaign_id)
    REFERENCES campaigns (institution_id, id),
  ADD CONSTRAINT pledges_appeal_fkey FOREIGN KEY (institution_id, appeal_id)
    REFERENCES appeals (institution_id, id);
CREATE INDEX pledges_campaign_ids_idx ON pledges USING gin (campaign_ids) WHERE campaign_ids <> '{}';
CREATE INDEX pledges_appeal_ids_idx ON pledges USING gin (appeal_ids) WHERE appeal_ids <> '{}';

ALTER TABLE recurring_gifts
  ADD COLUMN campaign_id bigint,
  ADD COLUMN appeal_id bigint,
  ADD COLUMN campaign_ids bigint[] NOT NULL DEFAULT '{}',
  ADD COLUMN appeal_ids bigint[] NOT NULL DEFAULT '{}',
  ADD CONSTRAINT recurring_gifts_campaign_fkey FOREIGN KEY (institution_id, campaign_id)
    REFERENCES campaigns (institution_id, id),
  ADD CONSTRAINT recurring_gifts_appeal_fkey FOREIGN KEY (institution_id, appeal_id)
    REFERENCES appeals (institution_id, id);
CREATE INDEX recurring_gifts_campaign_ids_idx ON recurring_gifts USING gin (campaign_ids)
  WHERE campaign_ids <> '{}';
CREATE INDEX recurring_gifts_appeal_ids_idx ON recurring_gifts USING gin (appeal_ids)
  WHERE appeal_ids <> '{}';

-- The record-level codes' own indexes: their foreign keys' checks when a campaign or an appeal
-- is deleted, and codeInUse.
CREATE INDEX gifts_campaign_idx ON gifts (institution_id, campaign_id) WHERE campaign_id IS NOT NULL;
CREATE INDEX gifts_appeal_idx ON gifts (institution_id, appeal_id) WHERE appeal_id IS NOT NULL;
CREATE INDEX pledges_campaign_idx ON pledges (institution_id, campaign_id)
  WHERE campaign_id IS NOT NULL;
CREATE INDEX pledges_appeal_idx ON pledges (institution_id, appeal_id) WHERE appeal_id IS NOT NULL;
CREATE INDEX recurring_gifts_campaign_idx ON recurring_gifts (institution_id, campaign_id)
  WHERE campaign_id IS NOT NULL;
CREATE INDEX recurring_gifts_appeal_idx ON recurring_gifts (institution_id, appeal_id)
  WHERE appeal_id IS NOT NULL;

-- One row per coded line of a gift (a designation, or the gift itself when undesignated), with
-- its effective codes and what it still counts in the base currency: what a campaign's progress
-- and an appeal's results sum, read from an index instead of every gift's jsonb. Written by
-- writeGiftLines (common/resources/campaigns/lines.ts) in the transaction of every write that
-- changes a gift's lines or money; a gift's delete takes its lines with it.
CREATE TABLE gift_lines (
  institution_id bigint NOT NULL,
  gift_id bigint NOT NULL,
  line integer NOT NULL,
  donor_id bigint NOT NULL,
  fund_id bigint,
  campaign_id bigint,
  appeal_id bigint,
  -- The line's base amount net of refunds; NULL for a gift not yet converted.
  base_net numeric(14, 2),
  -- Posted and converted: the line counts in progress and results.
  counted boolean NOT NULL,
  CONSTRAINT gift_lines_pkey PRIMARY KEY (institution_id, gift_id, line),
  CONSTRAINT gift_lines_gift_fkey FOREIGN KEY (institution_id, gift_id)
    REFERENCES gifts (institution_id, id) ON DELETE CASCADE
);
CREATE INDEX gift_lines_campaign_idx ON gift_lines (institution_id, campaign_id)
  INCLUDE (appeal_id, fund_id, gift_id, donor_id, base_net)
  WHERE counted AND campaign_id IS NOT NULL;
CREATE INDEX gift_lines_appeal_idx ON gift_lines (institution_id, appeal_id)
  INCLUDE (gift_id, donor_id, base_net)
  WHERE counted AND appeal_id IS NOT NULL;

-- Down Migration

DROP TABLE gift_lines;
ALTER TABLE recurring_gifts
  DROP COLUMN campaign_id, DROP COLUMN appeal_id, DROP COLUMN campaign_ids, DROP COLUMN appeal_ids;
ALTER TABLE pledges
  DROP COLUMN campaign_id, DROP COLUMN appeal_id, DROP COLUMN campaign_ids, DROP COLUMN appeal_ids;
ALTER TABLE gifts
  DROP COLUMN campaign_id, DROP COLUMN appeal_id, DROP COLUMN campaign_ids, DROP COLUMN appeal_ids;
