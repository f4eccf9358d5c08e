import { sql } from 'slonik';
import { z } from 'zod';
import type { ResourceIdentity } from '../../commands/resourceCommands.js';
import { countryCodes } from '../../validation/countries.js';
import { calendarDate, email, flag, oneOf, recordId, text } from '../../validation/fields.js';
import type { Shape } from '../../validation/validateBody.js';
import type { Reference } from '../checks.js';
import type { Table } from '../table.js';

export const donorIdentity: ResourceIdentity = {
  name: 'donors',
  object: 'donor',
  label: 'donor',
  path: '/donors',
};

export const donorRoles = [
  'Individual',
  'Household',
  'Organization',
  'Foundation',
  'Corporation',
] as const;
export const organizationRoles: readonly string[] = ['Organization', 'Foundation', 'Corporation'];
/**
 * What a write may set; `merged` is set only by a merge (constituents.md §5), `erased` only by
 * an erasure (§6).
 */
export const writableDonorStatuses = ['active', 'inactive', 'deceased'] as const;
export const donorStatuses = [...writableDonorStatuses, 'merged', 'erased'] as const;
/**
 * constituents.md §3, in the one order they are stored and returned in (a set: the order a
 * client sends them in is not kept).
 */
export const communicationRestrictions = [
  'do_not_solicit',
  'do_not_mail',
  'do_not_email',
  'do_not_call',
  'do_not_sms',
  'no_data_sharing',
] as const;
export type CommunicationRestriction = (typeof communicationRestrictions)[number];
/** A household's members at most: a family, not a mailing list; and `member_ids` stays bounded. */
export const maxHouseholdMembers = 100;

const addressLine = (max: number) =>
  text(max)
    .transform((value) => (value === '' ? null : value))
    .nullable()
    .optional();

const addressFields = {
  line1: addressLine(200),
  line2: addressLine(200),
  city: addressLine(100),
  region: addressLine(100),
  postal_code: addressLine(20),
  country: z
    .string({ message: 'must be a string' })
    .refine((value) => countryCodes.has(value), {
      message: 'must be an ISO 3166-1 alpha-2 country code such as US',
      params: { code: 'invalid_value' },
    })
    .nullable()
    .optional(),
};

export const addressSchema = z.strictObject(addressFields, { message: 'must be an object' });
export type Address = z.infer<typeof addressSchema>;

/** At most this many entries in each of `emails`, `phones` and `addresses`. */
export const maxContactPoints = 10;
export const emailTypes = ['home', 'work', 'other'] as const;
export const emailStatuses = ['active', 'bounced', 'inactive'] as const;
export const phoneTypes = ['home', 'work', 'mobile', 'other'] as const;
export const phoneStatuses = ['active', 'inactive'] as const;
export const addressTypes = ['home', 'work', 'seasonal', 'other'] as const;
export const addressStatuses = ['active', 'undeliverable', 'inactive'] as const;

const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** A month and day of any year, `MM-DD`: 02-29 is real (a leap year's season starts there). */
export const monthDay = z
  .string({ message: 'must be a string' })
  .refine(
    (value) => {
      const match = /^(\d{2})-(\d{2})$/.exec(value);
      if (!match) return false;
      const [month, day] = [Number(match[1]), Number(match[2])];
      return month >= 1 && month <= 12 && day >= 1 && day <= DAYS_IN_MONTH[month - 1]!;
    },
    { message: 'must be a real month and day written MM-DD', params: { code: 'invalid_format' } },
  )
  .meta({ pattern: '^(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$' });

/**
 * zod measures the length of whatever was sent, so a string in place of a list would also be
 * "too long"; zod's own `when` (left out of the check's parameter type) runs it only on arrays.
 */
const onlyOfArrays = { when: (payload: { value: unknown }) => Array.isArray(payload.value) };

const contactList = <T extends z.ZodType>(entry: T, noun: string) =>
  z.array(entry, { message: `must be an array of ${noun}` }).max(maxContactPoints, {
    message: `must list at most ${maxContactPoints} ${noun}`,
    ...onlyOfArrays,
  });

/** An entry's required `type`: missing is `required` (an enum alone would call it invalid). */
const kindOf = <const T extends readonly [string, ...string[]]>(values: T) =>
  z
    .string({
      error: (issue) => (issue.input === undefined ? 'is required' : 'must be a string'),
    })
    .pipe(oneOf(values))
    .meta({ enum: [...values] });

const listedEmail = z.strictObject(
  {
    address: email,
    type: kindOf(emailTypes),
    status: oneOf(emailStatuses).optional(),
  },
  { message: 'must be an object' },
);

const listedPhone = z.strictObject(
  {
    number: text(40).min(1, { message: 'is required' }),
    type: kindOf(phoneTypes),
    status: oneOf(phoneStatuses).optional(),
  },
  { message: 'must be an object' },
);

// The window's requiredness depends on `type`: the donor command judges it (checkContactPoints).
// A `status` left out is `active` (storeDonor): said in words, as every default of a body is.
const listedAddress = z.strictObject(
  {
    ...addressFields,
    type: kindOf(addressTypes),
    status: oneOf(addressStatuses).optional(),
    seasonal_from: monthDay.nullable().optional(),
    seasonal_to: monthDay.nullable().optional(),
  },
  { message: 'must be an object' },
);
export type ListedEmail = z.infer<typeof listedEmail>;
export type ListedPhone = z.infer<typeof listedPhone>;
export type ListedAddress = z.infer<typeof listedAddress>;

/** A donor's tags, in the order given; at most 50. */
const tagIds = z
  .array(recordId, { message: 'must be an array of tag ids' })
  .max(50, { message: 'must list at most 50 tags' });

const restrictionList = z
  .array(oneOf(communicationRestrictions), { message: 'must be an array of restrictions' })
  .max(communicationRestrictions.length, {
    message: `must list at most ${communicationRestrictions.length} restrictions`,
  });

export const donorShape: Shape = {
  role: { schema: oneOf(donorRoles), required: true },
  first_name: { schema: text(100), nullable: true },
  last_name: { schema: text(100), nullable: true },
  organization_name: { schema: text(200), nullable: true },
  email: { schema: email, nullable: true },
  external_id: { schema: text(100), nullable: true },
  phone: { schema: text(40), nullable: true },
  address: { schema: addressSchema, nullable: true },
  assigned_user_id: { schema: recordId, nullable: true },
  status: { schema: oneOf(writableDonorStatuses) },
  gives_anonymously: { schema: flag },
  tag_ids: { schema: tagIds },
  household_id: { schema: recordId, nullable: true },
  deceased_on: { schema: calendarDate, nullable: true },
  communication_restrictions: { schema: restrictionList },
  emails: { schema: contactList(listedEmail, 'emails') },
  phones: { schema: contactList(listedPhone, 'phones') },
  addresses: { schema: contactList(listedAddress, 'addresses') },
};

export const donorDefaults = {
  first_name: null,
  last_name: null,
  organization_name: null,
  email: null,
  external_id: null,
  phone: null,
  address: null,
  assigned_user_id: null,
  status: 'active',
  gives_anonymously: false,
  tag_ids: [],
  household_id: null,
  deceased_on: null,
  communication_restrictions: [],
  emails: [],
  phones: [],
  addresses: [],
};

export const donorRow = z.object({
  id: z.number(),
  role: z.enum(donorRoles),
  first_name: z.string().nullable(),
  last_name: z.string().nullable(),
  organization_name: z.string().nullable(),
  email: z.string().nullable(),
  external_id: z.string().nullable(),
  phone: z.string().nullable(),
  address: addressSchema.nullable(),
  assigned_user_id: z.number().nullable(),
  status: z.enum(donorStatuses),
  gives_anonymously: z.boolean(),
  tag_ids: z.array(z.number()),
  household_id: z.number().nullable(),
  deceased_on: z.string().nullable(),
  communication_restrictions: z.array(z.enum(communicationRestrictions)),
  emails: z.array(
    z.object({ address: z.string(), type: z.enum(emailTypes), status: z.enum(emailStatuses) }),
  ),
  phones: z.array(
    z.object({ number: z.string(), type: z.enum(phoneTypes), status: z.enum(phoneStatuses) }),
  ),
  addresses: z.array(
    addressSchema.extend({
      type: z.enum(addressTypes),
      status: z.enum(addressStatuses),
      seasonal_from: z.string().nullable(),
      seasonal_to: z.string().nullable(),
    }),
  ),
  merged_into_id: z.number().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type DonorRow = z.infer<typeof donorRow>;
export type DonorFields = Omit<DonorRow, 'id' | 'created_at' | 'updated_at' | 'merged_into_id'>;

export const donorTable: Table<DonorRow, DonorFields> = {
  name: 'donors',
  row: donorRow,
  // int8[] would arrive as strings: read as JSON, whose numbers are the ids.
  readAs: {
    tag_ids: sql.fragment`to_jsonb(tag_ids)`,
    deceased_on: sql.fragment`deceased_on::text`,
    communication_restrictions: sql.fragment`to_jsonb(communication_restrictions)`,
  },
  writeAs: {
    address: (address) => (address ? sql.jsonb(address) : null),
    tag_ids: (ids) => sql.array(ids, 'int8'),
    deceased_on: (date) => (date === null ? null : sql.fragment`${date}::date`),
    communication_restrictions: (values) => sql.array(values, 'text'),
    emails: (values) => sql.jsonb(values),
    phones: (values) => sql.jsonb(values),
    addresses: (values) => sql.jsonb(values),
  },
};

export const givingRow = z.object({
  total_amount: z.string(),
  gift_count: z.number(),
  first_gift_date: z.string().nullable(),
  last_gift_date: z.string().nullable(),
  soft_credit_total: z.string(),
  soft_credit_count: z.number(),
  pledged_outstanding: z.string(),
});
export type GivingRow = z.infer<typeof givingRow>;

/** How other records refer to a donor. */
export const donorReference: Reference = {
  table: 'donors',
  noun: 'a donor',
  // A merged donor's records live on its survivor, an erased one is no one any more: nothing
  // new may name either tombstone.
  unusable: { statuses: ['merged', 'erased'], code: 'reference_inactive' },
};
