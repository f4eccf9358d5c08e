-- Up Migration

-- Every attempt of a webhook delivery, not only its latest (which webhook_deliveries keeps in
-- its last_* columns for the deliveries list). Written by the worker in the transaction that
-- records the attempt on its delivery; pruned with the events (EVENT_RETENTION_DAYS).
CREATE TABLE webhook_delivery_attempts (
  id bigint GENERATED ALWAYS AS IDENTITY,
  institution_id bigint NOT NULL,
  delivery_id bigint NOT NULL,
  status_code integer,
  duration_ms integer NOT NULL,
  error text,
  started_at timestamptz(3) NOT NULL,
  CONSTRAINT webhook_delivery_attempts_pkey PRIMARY KEY (institution_id, id),
  FOREIGN KEY (institution_id, delivery_id) REFERENCES webhook_deliveries ON DELETE CASCADE
);
CREATE INDEX webhook_delivery_attempts_delivery_idx
  ON webhook_delivery_attempts (institution_id, delivery_id, id);
-- Retention deletes by age across institutions.
CREATE INDEX webhook_delivery_attempts_started_brin
  ON webhook_delivery_attempts USING brin (started_at);

-- Down Migration

DROP TABLE webhook_delivery_attempts;
