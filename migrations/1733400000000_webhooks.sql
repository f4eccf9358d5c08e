-- Up Migration

-- Webhooks (integration.md §2). An endpoint's `secret` is the one it is told at create and at
-- each rotation; during a rotation the secret it replaced keeps signing until
-- `previous_secret_expires_at`, so a receiver can switch over without losing a delivery.

CREATE TABLE webhook_endpoints (
  id bigint GENERATED ALWAYS AS IDENTITY,
  institution_id bigint NOT NULL REFERENCES institutions (id),
  url text NOT NULL,
  enabled_events text[] NOT NULL,
  description text,
  status text NOT NULL DEFAULT 'enabled' CHECK (status IN ('enabled', 'disabled')),
  secret text NOT NULL,
  previous_secret text,
  previous_secret_expires_at timestamptz(3),
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  CONSTRAINT webhook_endpoints_pkey PRIMARY KEY (institution_id, id)
);

-- Which events have been turned into deliveries. Events are read in the order of the
-- transaction that wrote them (`xact`), up to the oldest transaction still running: every
-- event below that is committed or gone for good, so the cursor never passes an event that
-- commits later (sequence numbers are taken before commit and commit out of order).
ALTER TABLE events ADD COLUMN xact xid8 NOT NULL DEFAULT pg_current_xact_id();
CREATE INDEX events_xact_idx ON events (xact, seq);

CREATE TABLE webhook_dispatch_cursor (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  xact xid8 NOT NULL,
  seq bigint NOT NULL
);
-- Events written before webhooks existed are not delivered.
INSERT INTO webhook_dispatch_cursor (xact, seq)
  VALUES (pg_snapshot_xmin(pg_current_snapshot()), 0);

CREATE TABLE webhook_deliveries (
  id bigint GENERATED ALWAYS AS IDENTITY,
  institution_id bigint NOT NULL,
  endpoint_id bigint NOT NULL,
  event_id text NOT NULL,
  event_type text NOT NULL,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  last_status_code integer,
  last_error text,
  last_duration_ms integer,
  next_attempt_at timestamptz(3),
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  CONSTRAINT webhook_deliveries_pkey PRIMARY KEY (institution_id, id),
  -- A dispatch that runs twice (a worker died before its cursor moved) makes no second delivery.
  CONSTRAINT webhook_deliveries_event_key UNIQUE (institution_id, endpoint_id, event_id),
  FOREIGN KEY (institution_id, endpoint_id) REFERENCES webhook_endpoints ON DELETE CASCADE
);
CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (institution_id, endpoint_id, id);

-- Down Migration

DROP TABLE webhook_deliveries;
DROP TABLE webhook_dispatch_cursor;
DROP INDEX events_xact_idx;
ALTER TABLE events DROP COLUMN xact;
DROP TABLE webhook_endpoints;
