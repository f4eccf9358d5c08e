import { z } from 'zod';
import { calendarDay, moneyAmount, recordIdOf, reference, timestamps } from '../responseFields.js';
import {
  addressStatuses,
  addressTypes,
  communicationRestrictions,
  donorRoles,
  donorStatuses,
  emailStatuses,
  emailTypes,
  maxContactPoints,
  maxHouseholdMembers,
  phoneStatuses,
  phoneTypes,
} from './schema.js';

const line = z.string().nullable();

/** Every key is present, null where it was not given. */
export const addressResponse = z.object({
  line1: line,
  line2: line,
  city: line,
  region: line,
  postal_code: line,
  country: line.describe('ISO 3166-1 alpha-2 code.'),
});

export type AddressResponse = z.infer<typeof addressResponse>;

const monthDay = z
  .string()
  .regex(/^(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$/)
  .nullable();

const listedEmailResponse = z.object({
  address: z.string(),
  type: z.enum(emailTypes),
  status: z.enum(emailStatuses),
});
const listedPhoneResponse = z.object({
  number: z.string(),
  type: z.enum(phoneTypes),
  status: z.enum(phoneStatuses),
});
const listedAddressResponse = addressResponse.extend({
  type: z.enum(addressTypes),
  status: z.enum(addressStatuses),
  seasonal_from: monthDay.describe('`MM-DD`, the first day of the season; null unless seasonal.'),
  seasonal_to: monthDay.describe(
    '`MM-DD`, the last day of the season (before `seasonal_from` when the season spans the year end); null unless seasonal.',
  ),
});
export type ListedEmailResponse = z.infer<typeof listedEmailResponse>;
export type ListedPhoneResponse = z.infer<typeof listedPhoneResponse>;
export type ListedAddressResponse = z.infer<typeof listedAddressResponse>;

const givingResponse = z
  .object({
    total_amount: moneyAmount.describe(
      'Hard credit: the sum of the donor’s gifts that are not voided, net of refunds, in the base currency (their `base_amount`s net of their refunds’); 0 without gifts.',
    ),
    gift_count: z.number().int().min(0).describe('The donor’s gifts that are not voided.'),
    first_gift_date: calendarDay.nullable(),
    last_gift_date: calendarDay.nullable(),
    soft_credit_total: moneyAmount.describe(
      'The sum of the soft credits other donors’ gifts (not voided) give this donor, in the base currency, each counted in proportion to its gift’s net amount: the credit’s `base_amount` × the gift’s net base amount / its `base_amount`, rounded down to the cent. A credit of a gift refunded in full counts 0, one of a gift refunded 40 of 100 counts 60% of its amount, and a credit of the whole gift counts exactly the gift’s net amount. Never part of total_amount or of fund totals.',
    ),
    soft_credit_count: z
      .number()
      .int()
      .min(0)
      .describe(
        'How many such soft credits, a credit of a gift refunded in full included (as `gift_count` counts such a gift).',
      ),
    pledged_outstanding: moneyAmount.describe(
      'The sum of the `base_balance`s of the donor’s open pledges: promised, not yet paid, in the base currency.',
    ),
  })
  .describe(
    'Read-only giving summary, on GET /donors/{id} only, in the institution’s base currency: every figure sums base amounts (a gift in another currency counts at the rate it was posted at; one recorded before currencies and not yet given a rate counts nowhere). A Household’s counts its own records and those of its current members as one donor’s, each gift once: `total_amount`, `gift_count` and the dates cover the gifts of the household and of each current member (hard credit, net of refunds, voided gifts left out), and `pledged_outstanding` their open pledges; `soft_credit_total` and `soft_credit_count` cover only the soft credits that gifts of other donors give the household itself, so a member’s gift that also soft-credits the household counts once, as hard credit. A member’s soft credits are the member’s own and are not counted. A member leaving takes its records out of the household’s figures (and a member joining brings its whole history in); a member’s own `giving` is unchanged by its household.',
  );

/** The donor as create, update and lists return it (presentDonor). */
export const donorResponse = z.object({
  id: recordIdOf('donor'),
  object: z.literal('donor'),
  role: z.enum(donorRoles),
  display_name: z
    .string()
    .describe('Read-only: "First Last" for an Individual, else the organization name or the name.'),
  first_name: z.string().nullable(),
  last_name: z.string().nullable(),
  organization_name: z.string().nullable(),
  email: z.string().nullable(),
  external_id: z
    .string()
    .nullable()
    .describe('The donor’s id in the system its records come from; unique per institution.'),
  phone: z.string().nullable(),
  address: addressResponse.nullable(),
  assigned_user_id: reference('assigned user').nullable(),
  status: z.enum(donorStatuses),
  gives_anonymously: z.boolean(),
  tag_ids: z.array(reference('tag')).max(50).describe('The donor’s tags, in the order given.'),
  household_id: reference('household')
    .nullable()
    .describe(
      'The household (a donor of role `Household`) this Individual belongs to; null for none.',
    ),
  deceased_on: calendarDay
    .nullable()
    .describe('The date of death; only with `status` `deceased`, null otherwise.'),
  communication_restrictions: z
    .array(z.enum(communicationRestrictions))
    .max(communicationRestrictions.length)
    .describe(
      'What the donor does not allow, each once, in this one order whatever order was sent; `[]` for none.',
    ),
  emails: z
    .array(listedEmailResponse)
    .max(maxContactPoints)
    .describe('Email addresses besides the primary `email`, in the order given; `[]` for none.'),
  phones: z
    .array(listedPhoneResponse)
    .max(maxContactPoints)
    .describe('Phone numbers besides the primary `phone`, in the order given; `[]` for none.'),
  addresses: z
    .array(listedAddressResponse)
    .max(maxContactPoints)
    .describe('Addresses besides the primary `address`, in the order given; `[]` for none.'),
  mailing_address: addressResponse
    .nullable()
    .describe(
      'Read-only: where mail goes today (the service’s one clock). The first `active` `seasonal` entry of `addresses` whose window holds today (a window may span the year end), as an address (its type, status and window left out); else the primary `address`; null when neither.',
    ),
  merged_into_id: reference('donor')
    .nullable()
    .describe(
      'Read-only: on a merged donor (`status` `merged`), the donor it was merged into, which now holds its records; null otherwise.',
    ),
  ...timestamps,
});
export type DonorResponse = z.infer<typeof donorResponse>;

/** GET /donors/{id}: the donor with its giving summary and, for a Household, its members. */
export const donorDetailResponse = donorResponse.extend({
  giving: givingResponse,
  member_ids: z
    .array(reference('donor'))
    .max(maxHouseholdMembers)
    .optional()
    .describe(
      'Read-only, on GET /donors/{id} of a Household only: the ids of its current members, oldest first (by donor id, ascending); `[]` for none. `GET /donors?household_id=` lists them.',
    ),
});
export type DonorDetailResponse = z.infer<typeof donorDetailResponse>;
