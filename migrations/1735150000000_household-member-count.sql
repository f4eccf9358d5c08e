-- Up Migration

-- A join to a household is judged by one statement that holds the household FOR NO KEY UPDATE
-- and counts its members (common/resources/donors/queries.ts, findHouseholdToJoin). A count in
-- that statement's own query would read the snapshot taken before the lock, so a join that
-- waited for another to commit would not see the member that one added. A VOLATILE function
-- takes a snapshot of its own for each of its statements, when it runs them: called after the
-- lock, it counts every member committed by then. PL/pgSQL keeps the count's plan for the
-- session (a SQL function's body is planned again at every call).
CREATE FUNCTION household_member_count(institution bigint, household bigint) RETURNS bigint
  LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE AS $$
BEGIN
  RETURN (SELECT count(*) FROM donors
          WHERE institution_id = institution AND household_id = household);
END
$$;

-- Down Migration

DROP FUNCTION household_member_count(bigint, bigint);
