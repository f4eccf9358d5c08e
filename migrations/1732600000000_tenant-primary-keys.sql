-- Up Migration

-- Every tenant table is identified by (institution_id, id), the key every query uses. An index
-- on id alone tempted the planner into walking other institutions' rows while paging (a
-- backward scan of the id index, filtering on institution_id), so each table's primary key
-- becomes (institution_id, id) and the id-only index goes. Ids stay unique on their own: they
-- come from one identity per table. Foreign keys are re-pointed at the new primary keys.

ALTER TABLE donors DROP CONSTRAINT donors_assigned_user_fkey;
ALTER TABLE gifts DROP CONSTRAINT gifts_donor_fkey;
ALTER TABLE gifts DROP CONSTRAINT gifts_fund_fkey;
ALTER TABLE scholarships DROP CONSTRAINT scholarships_fund_fkey;
ALTER TABLE awards DROP CONSTRAINT awards_award_cycle_fkey;
ALTER TABLE awards DROP CONSTRAINT awards_scholarship_fkey;
ALTER TABLE awards DROP CONSTRAINT awards_student_fkey;

ALTER TABLE users DROP CONSTRAINT users_pkey, DROP CONSTRAINT users_institution_id_key,
  ADD CONSTRAINT users_pkey PRIMARY KEY (institution_id, id);
ALTER TABLE funds DROP CONSTRAINT funds_pkey, DROP CONSTRAINT funds_institution_id_key,
  ADD CONSTRAINT funds_pkey PRIMARY KEY (institution_id, id);
ALTER TABLE donors DROP CONSTRAINT donors_pkey, DROP CONSTRAINT donors_institution_id_key,
  ADD CONSTRAINT donors_pkey PRIMARY KEY (institution_id, id);
ALTER TABLE gifts DROP CONSTRAINT gifts_pkey, DROP CONSTRAINT gifts_institution_id_key,
  ADD CONSTRAINT gifts_pkey PRIMARY KEY (institution_id, id);
ALTER TABLE award_cycles DROP CONSTRAINT award_cycles_pkey, DROP CONSTRAINT award_cycles_institution_id_key,
  ADD CONSTRAINT award_cycles_pkey PRIMARY KEY (institution_id, id);
ALTER TABLE students DROP CONSTRAINT students_pkey, DROP CONSTRAINT students_institution_id_key,
  ADD CONSTRAINT students_pkey PRIMARY KEY (institution_id, id);
ALTER TABLE scholarships DROP CONSTRAINT scholarships_pkey, DROP CONSTRAINT scholarships_institution_id_key,
  ADD CONSTRAINT scholarships_pkey PRIMARY KEY (institution_id, id);
ALTER TABLE awards DROP CONSTRAINT awards_pkey, DROP CONSTRAINT awards_institution_id_key,
  ADD CONSTRAINT awards_pkey PRIMARY KEY (institution_id, id);

ALTER TABLE donors ADD CONSTRAINT donors_assigned_user_fkey FOREIGN KEY (institution_id, assigned_user_id)
  REFERENCES users (institution_id, id);
ALTER TABLE gifts ADD CONSTRAINT gifts_donor_fkey FOREIGN KEY (institution_id, donor_id)
  REFERENCES donors (institution_id, id);
ALTER TABLE gifts ADD CONSTRAINT gifts_fund_fkey FOREIGN KEY (institution_id, fund_id)
  REFERENCES funds (institution_id, id);
ALTER TABLE scholarships ADD CONSTRAINT scholarships_fund_fkey FOREIGN KEY (institution_id, fund_id)
  REFERENCES funds (institution_id, id);
ALTER TABLE awards ADD CONSTRAINT awards_award_cycle_fkey FOREIGN KEY (institution_id, award_cycle_id)
  REFERENCES award_cycles (institution_id, id);
ALTER TABLE awards ADD CONSTRAINT awards_scholarship_fkey FOREIGN KEY (institution_id, scholarship_id)
  REFERENCES scholarships (institution_id, id);
ALTER TABLE awards ADD CONSTRAINT awards_student_fkey FOREIGN KEY (institution_id, student_id)
  REFERENCES students (institution_id, id);

-- Down Migration

ALTER TABLE donors DROP CONSTRAINT donors_assigned_user_fkey;
ALTER TABLE gifts DROP CONSTRAINT gifts_donor_fkey;
ALTER TABLE gifts DROP CONSTRAINT gifts_fund_fkey;
ALTER TABLE scholarships DROP CONSTRAINT scholarships_fund_fkey;
ALTER TABLE awards DROP CONSTRAINT awards_award_cycle_fkey;
ALTER TABLE awards DROP CONSTRAINT awards_scholarship_fkey;
ALTER TABLE awards DROP CONSTRAINT awards_student_fkey;

ALTER TABLE users DROP CONSTRAINT users_pkey, ADD CONSTRAINT users_pkey PRIMARY KEY (id),
  ADD CONSTRAINT users_institution_id_key UNIQUE (institution_id, id);
ALTER TABLE funds DROP CONSTRAINT funds_pkey, ADD CONSTRAINT funds_pkey PRIMARY KEY (id),
  ADD CONSTRAINT funds_institution_id_key UNIQUE (institution_id, id);
ALTER TABLE donors DROP CONSTRAINT donors_pkey, ADD CONSTRAINT donors_pkey PRIMARY KEY (id),
  ADD CONSTRAINT donors_institution_id_key UNIQUE (institution_id, id);
ALTER TABLE gifts DROP CONSTRAINT gifts_pkey, ADD CONSTRAINT gifts_pkey PRIMARY KEY (id),
  ADD CONSTRAINT gifts_institution_id_key UNIQUE (institution_id, id);
ALTER TABLE award_cycles DROP CONSTRAINT award_cycles_pkey, ADD CONSTRAINT award_cycles_pkey PRIMARY KEY (id),
  ADD CONSTRAINT award_cycles_institution_id_key UNIQUE (institution_id, id);
ALTER TABLE students DROP CONSTRAINT students_pkey, ADD CONSTRAINT students_pkey PRIMARY KEY (id),
  ADD CONSTRAINT students_institution_id_key UNIQUE (institution_id, id);
ALTER TABLE scholarships DROP CONSTRAINT scholarships_pkey, ADD CONSTRAINT scholarships_pkey PRIMARY KEY (id),
  ADD CONSTRAINT scholarships_institution_id_key UNIQUE (institution_id, id);
ALTER TABLE awards DROP CONSTRAINT awards_pkey, ADD CONSTRAINT awards_pkey PRIMARY KEY (id),
  ADD CONSTRAINT awards_institution_id_key UNIQUE (institution_id, id);

ALTER TABLE donors ADD CONSTRAINT donors_assigned_user_fkey FOREIGN KEY (institution_id, assigned_user_id)
  REFERENCES users (institution_id, id);
ALTER TABLE gifts ADD CONSTRAINT gifts_donor_fkey FOREIGN KEY (institution_id, donor_id)
  REFERENCES donors (institution_id, id);
ALTER TABLE gifts ADD CONSTRAINT gifts_fund_fkey FOREIGN KEY (institution_id, fund_id)
  REFERENCES funds (institution_id, id);
ALTER TABLE scholarships ADD CONSTRAINT scholarships_fund_fkey FOREIGN KEY (institution_id, fund_id)
  REFERENCES funds (institution_id, id);
ALTER TABLE awards ADD CONSTRAINT awards_award_cycle_fkey FOREIGN KEY (institution_id, award_cycle_id)
  REFERENCES award_cycles (institution_id, id);
ALTER TABLE awards ADD CONSTRAINT awards_scholarship_fkey FOREIGN KEY (institution_id, scholarship_id)
  REFERENCES scholarships (institution_id, id);
ALTER TABLE awards ADD CONSTRAINT awards_student_fkey FOREIGN KEY (institution_id, student_id)
  REFERENCES students (institution_id, id);
