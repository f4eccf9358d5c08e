import { sql, type CommonQueryMethods, type FragmentSqlToken } from 'slonik';
import { donorRow, givingRow, type DonorFields, type DonorRow, type GivingRow } from './schema.js';

export const columns = sql.fragment`
  id, role, first_name, last_name, organization_name, email, phone, address, assigned_user_id,
  status, gives_anonymously, created_at, updated_at`;

const addressValue = (address: DonorFields['address']) => (address ? sql.jsonb(address) : null);

export function findDonor(
  db: CommonQueryMethods,
  institutionId: number,
  id: number,
  lock: FragmentSqlToken = sql.fragment``,
): Promise<DonorRow | null> {
  return db.maybeOne(sql.type(donorRow)`
    SELECT ${columns} FROM donors WHERE institution_id = ${institutionId} AND id = ${id} ${lock}`);
}

export function findGiving(
  db: CommonQueryMethods,
  institutionId: number,
  donorId: number,
): Promise<GivingRow> {
  return db.one(sql.type(givingRow)`
    SELECT coalesce(sum(amount), 0)::numeric(14, 2) AS total_amount, count(*)::int AS gift_count,
           min(gift_date) AS first_gift_date, max(gift_date) AS last_gift_date
    FROM gifts WHERE institution_id = ${institutionId} AND donor_id = ${donorId}`);
}

export function donorHasGifts(
  db: CommonQueryMethods,
  institutionId: number,
  donorId: number,
): Promise<boolean> {
  return db.exists(sql.unsafe`
    SELECT 1 FROM gifts WHERE institution_id = ${institutionId} AND donor_id = ${donorId}`);
}

export function insertDonor(
  db: CommonQueryMethods,
  institutionId: number,
  donor: DonorFields,
): Promise<DonorRow> {
  return db.one(sql.type(donorRow)`
    INSERT INTO donors (institution_id, role, first_name, last_name, organization_name, email, phone,
                        address, assigned_user_id, status, gives_anonymously)
    VALUES (${institutionId}, ${donor.role}, ${donor.first_name}, ${donor.last_name},
            ${donor.organization_name}, ${donor.email}, ${donor.phone}, ${addressValue(donor.address)},
            ${donor.assigned_user_id}, ${donor.status}, ${donor.gives_anonymously})
    RETURNING ${columns}`);
}

export function updateDonor(
  db: CommonQueryMethods,
  institutionId: number,
  id: number,
  donor: DonorFields,
): Promise<DonorRow> {
  return db.one(sql.type(donorRow)`
    UPDATE donors SET role = ${donor.role}, first_name = ${donor.first_name},
      last_name = ${donor.last_name}, organization_name = ${donor.organization_name},
      email = ${donor.email}, phone = ${donor.phone}, address = ${addressValue(donor.address)},
      assigned_user_id = ${donor.assigned_user_id}, status = ${donor.status},
      gives_anonymously = ${donor.gives_anonymously}, updated_at = now()
    WHERE institution_id = ${institutionId} AND id = ${id}
    RETURNING ${columns}`);
}

export async function deleteDonor(
  db: CommonQueryMethods,
  institutionId: number,
  id: number,
): Promise<void> {
  await db.query(
    sql.unsafe`DELETE FROM donors WHERE institution_id = ${institutionId} AND id = ${id}`,
  );
}
