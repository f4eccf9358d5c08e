import { today } from '../../clock.js';
import type {
  AddressResponse,
  DonorDetailResponse,
  DonorResponse,
  ListedAddressResponse,
} from './response.js';
import type { Address, DonorFields, DonorRow, GivingRow } from './schema.js';

/** "First Last" for people; the organisation (or household) name where there is one. */
export function displayName(
  donor: Pick<DonorFields, 'role' | 'first_name' | 'last_name' | 'organization_name'>,
): string {
  const personal = [donor.first_name, donor.last_name].filter(Boolean).join(' ');
  if (donor.role === 'Individual') return personal;
  return donor.organization_name ?? personal;
}

/** Every address key is always present, null when not given, whatever order it was stored in. */
export function presentAddress(address: Address | null): AddressResponse | null {
  if (!address) return null;
  return {
    line1: address.line1 ?? null,
    line2: address.line2 ?? null,
    city: address.city ?? null,
    region: address.region ?? null,
    postal_code: address.postal_code ?? null,
    country: address.country ?? null,
  };
}

/** Whether `MM-DD` `day` falls in the window, both ends included; a window may span the year end. */
export function inSeason(day: string, from: string, to: string): boolean {
  return from <= to ? from <= day && day <= to : day >= from || day <= to;
}

/** Where mail goes today: the first active seasonal address in season, else the primary one. */
export function mailingAddress(
  row: Pick<DonorRow, 'address' | 'addresses'>,
  day = today().slice(5),
): AddressResponse | null {
  const seasonal = row.addresses.find(
    (entry) =>
      entry.type === 'seasonal' &&
      entry.status === 'active' &&
      entry.seasonal_from !== null &&
      entry.seasonal_to !== null &&
      inSeason(day, entry.seasonal_from, entry.seasonal_to),
  );
  return presentAddress(seasonal ?? row.address);
}

const presentListedAddress = (entry: DonorRow['addresses'][number]): ListedAddressResponse => ({
  ...presentAddress(entry)!,
  type: entry.type,
  status: entry.status,
  seasonal_from: entry.seasonal_from,
  seasonal_to: entry.seasonal_to,
});

/** With `giving`, as GET /donors/{id} answers; `memberIds` are a Household's (else omitted). */
export function presentDonor(
  row: DonorRow,
  giving?: GivingRow,
  memberIds?: readonly number[],
): DonorResponse | DonorDetailResponse {
  return {
    id: row.id,
    object: 'donor',
    role: row.role,
    display_name: displayName(row),
    first_name: row.first_name,
    last_name: row.last_name,
    organization_name: row.organization_name,
    email: row.email,
    external_id: row.external_id,
    phone: row.phone,
    address: presentAddress(row.address),
    assigned_user_id: row.assigned_user_id,
    status: row.status,
    gives_anonymously: row.gives_anonymously,
    tag_ids: row.tag_ids,
    household_id: row.household_id,
    deceased_on: row.deceased_on,
    communication_restrictions: row.communication_restrictions,
    emails: row.emails.map(({ address, type, status }) => ({ address, type, status })),
    phones: row.phones.map(({ number, type, status }) => ({ number, type, status })),
    addresses: row.addresses.map(presentListedAddress),
    mailing_address: mailingAddress(row),
    // A create's dry run presents fields that have no merged_into_id yet.
    merged_into_id: row.merged_into_id ?? null,
    ...(giving
      ? {
          giving: {
            total_amount: Number(giving.total_amount),
            gift_count: giving.gift_count,
            first_gift_date: giving.first_gift_date,
            last_gift_date: giving.last_gift_date,
            soft_credit_total: Number(giving.soft_credit_total),
            soft_credit_count: giving.soft_credit_count,
            pledged_outstanding: Number(giving.pledged_outstanding),
          },
        }
      : {}),
    ...(memberIds ? { member_ids: [...memberIds] } : {}),
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
