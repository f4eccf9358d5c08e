import { sql, type CommonQueryMethods, type FragmentSqlToken } from 'slonik';
import { userRow, type UserFields, type UserRow } from './schema.js';

export const columns = sql.fragment`id, email, first_name, last_name, role, status, created_at, updated_at`;

export function findUser(
  db: CommonQueryMethods,
  institutionId: number,
  id: number,
  lock: FragmentSqlToken = sql.fragment``,
): Promise<UserRow | null> {
  return db.maybeOne(sql.type(userRow)`
    SELECT ${columns} FROM users WHERE institution_id = ${institutionId} AND id = ${id} ${lock}`);
}

export function insertUser(
  db: CommonQueryMethods,
  institutionId: number,
  user: UserFields,
): Promise<UserRow> {
  return db.one(sql.type(userRow)`
    INSERT INTO users (institution_id, email, first_name, last_name, role, status)
    VALUES (${institutionId}, ${user.email}, ${user.first_name}, ${user.last_name}, ${user.role}, ${user.status})
    RETURNING ${columns}`);
}

export function updateUser(
  db: CommonQueryMethods,
  institutionId: number,
  id: number,
  user: UserFields,
): Promise<UserRow> {
  return db.one(sql.type(userRow)`
    UPDATE users SET email = ${user.email}, first_name = ${user.first_name},
      last_name = ${user.last_name}, role = ${user.role}, status = ${user.status}, updated_at = now()
    WHERE institution_id = ${institutionId} AND id = ${id}
    RETURNING ${columns}`);
}
