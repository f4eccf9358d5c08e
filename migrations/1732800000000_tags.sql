-- Up Migration

-- Tags label donors ("Board member", "Reunion 2026"). A donor's tags are an array of tag ids on
-- the donor, in the order the client gave them; deleting a tag removes it from every donor in
-- the same transaction. The GIN index serves GET /donors?tag_id= (tag_ids @> ARRAY[id]).

CREATE TABLE tags (
  id bigint GENERATED ALWAYS AS IDENTITY,
  institution_id bigint NOT NULL REFERENCES institutions (id),
  name text NOT NULL,
  color text,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  CONSTRAINT tags_pkey PRIMARY KEY (institution_id, id)
);
-- Names are unique per institution regardless of letter case ("VIP" is "vip").
CREATE UNIQUE INDEX tags_institution_name_key ON tags (institution_id, lower(name));

ALTER TABLE donors ADD COLUMN tag_ids bigint[] NOT NULL DEFAULT '{}';
CREATE INDEX donors_tag_ids_idx ON donors USING gin (tag_ids);

-- Down Migration

DROP INDEX donors_tag_ids_idx;
ALTER TABLE donors DROP COLUMN tag_ids;
DROP TABLE tags;
