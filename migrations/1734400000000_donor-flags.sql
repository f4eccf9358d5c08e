-- Up Migration

-- Donor flags (constituents.md §3). deceased_on belongs to a deceased donor only; the command
-- answers not_allowed before this check is reached, which keeps the rule true for any writer.
-- communication_restrictions is a set, stored in one canonical order (the order of the list
-- below, which the command sorts by), each value once.
ALTER TABLE donors ADD COLUMN deceased_on date,
  ADD COLUMN communication_restrictions text[] NOT NULL DEFAULT '{}',
  ADD CONSTRAINT donors_deceased_on_check CHECK (deceased_on IS NULL OR status = 'deceased'),
  ADD CONSTRAINT donors_communication_restrictions_check CHECK (
    communication_restrictions <@ ARRAY['do_not_solicit', 'do_not_mail', 'do_not_email',
      'do_not_call', 'do_not_sms', 'no_data_sharing']::text[]);

-- Down Migration

ALTER TABLE donors DROP COLUMN communication_restrictions, DROP COLUMN deceased_on;
