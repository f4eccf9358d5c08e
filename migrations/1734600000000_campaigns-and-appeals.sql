-- Up Migration

-- Campaigns and appeals (fundraising.md §3): the codes a gift line carries beside its fund.
-- A campaign may sit under another (parent_id), a tree kept acyclic by the write that changes
-- it (a CHECK cannot see other rows); an appeal may belong to one campaign. Codes are unique per
-- institution, compared case-insensitively (as tags' names), so "ANNUAL26" and "annual26" are
-- one code. A referenced campaign cannot be deleted: the foreign keys refuse it as a backstop
-- to the delete's own 409.
CREATE TABLE campaigns (
  id bigint GENERATED ALWAYS AS IDENTITY,
  institution_id bigint NOT NULL REFERENCES institutions (id),
  name text NOT NULL,
  code text NOT NULL,
  parent_id bigint,
  starts_on date,
  ends_on date,
  goal numeric(14, 2) CONSTRAINT campaigns_goal_check CHECK (goal > 0),
  status text NOT NULL CONSTRAINT campaigns_status_check CHECK (status IN ('active', 'closed')),
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  CONSTRAINT campaigns_pkey PRIMARY KEY (institution_id, id),
  CONSTRAINT campaigns_parent_fkey FOREIGN KEY (institution_id, parent_id)
    REFERENCES campaigns (institution_id, id),
  CONSTRAINT campaigns_not_own_parent_check CHECK (parent_id <> id),
  CONSTRAINT campaigns_dates_check CHECK (ends_on >= starts_on)
);
CREATE UNIQUE INDEX campaigns_institution_code_key ON campaigns (institution_id, lower(code));
-- A campaign's children (GET /campaigns?parent_id=, the descendant walk, the delete's check).
CREATE INDEX campaigns_parent_idx ON campaigns (institution_id, parent_id, id);

CREATE TABLE appeals (
  id bigint GENERATED ALWAYS AS IDENTITY,
  institution_id bigint NOT NULL REFERENCES institutions (id),
  name text NOT NULL,
  code text NOT NULL,
  campaign_id bigint,
  channel text NOT NULL CONSTRAINT appeals_channel_check
    CHECK (channel IN ('mail', 'email', 'phone', 'event', 'web', 'social', 'other')),
  starts_on date,
  ends_on date,
  cost numeric(14, 2) CONSTRAINT appeals_cost_check CHECK (cost >= 0),
  status text NOT NULL CONSTRAINT appeals_status_check CHECK (status IN ('active', 'closed')),
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  CONSTRAINT appeals_pkey PRIMARY KEY (institution_id, id),
  CONSTRAINT appeals_campaign_fkey FOREIGN KEY (institution_id, campaign_id)
    REFERENCES campaigns (institution_id, id),
  CONSTRAINT appeals_dates_check CHECK (ends_on >= starts_on)
);
CREATE UNIQUE INDEX appeals_institution_code_key ON appeals (institution_id, lower(code));
-- A campaign's appeals (GET /appeals?campaign_id=, a campaign's delete).
CREATE INDEX appeals_campaign_idx ON appeals (institution_id, campaign_id, id);

-- Down Migration

DROP TABLE appeals;
DROP TABLE campaigns;
