import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { errors } from '../../errors.js';
import { consentModes, type ConsentMode } from '../../institutions.js';
import { consentChannels, consentResponses } from '../consents/schema.js';
import type { RecordReadDescriptor } from '../descriptor.js';
import { reference } from '../responseFields.js';
import { findRow } from '../table.js';
import { mailingAddress } from './present.js';
import { donorTable, type CommunicationRestriction, type DonorRow } from './schema.js';

type Channel = (typeof consentChannels)[number];

/** constituents.md §4, in the order an answer lists them. */
export const eligibilityReasons = [
  'deceased',
  'restricted',
  'no_contact_point',
  'opted_out',
  'no_opt_in',
] as const;
type Reason = (typeof eligibilityReasons)[number];

const MAX_PURPOSE = 60;

/** The restriction that closes each channel (`do_not_solicit` closes them all). */
const restrictionOf: Record<Channel, CommunicationRestriction> = {
  email: 'do_not_email',
  mail: 'do_not_mail',
  phone: 'do_not_call',
  sms: 'do_not_sms',
};

export const eligibilityResponse = z.object({
  object: z.literal('eligibility'),
  donor_id: reference('donor'),
  channel: z.enum(consentChannels),
  purpose: z.string().nullable().describe('As asked (trimmed); null when no purpose was asked.'),
  allowed: z.boolean().describe('True exactly when `reasons` is empty.'),
  reasons: z
    .array(z.enum(eligibilityReasons))
    .max(eligibilityReasons.length)
    .describe('Why not, each once, in the order of the enumeration; `[]` when allowed.'),
});
export type EligibilityResponse = z.infer<typeof eligibilityResponse>;

const latestRow = z.object({
  consent_mode: z.enum(consentModes),
  purpose: z.string().nullable(),
  response: z.enum(consentResponses).nullable(),
});

/**
 * The institution's consent mode and the latest consent of the channel for the whole channel
 * and for the purpose (one row each that exists; one row of nulls for neither), in one
 * statement on consents_latest_idx. Latest is by `captured_at`, then by id: an answer captured
 * earlier but recorded later does not override a newer one. The mode is read here, not from
 * the key's cached institution, so a change of mode counts at once.
 */
async function latestConsents(
  db: CommonQueryMethods,
  institutionId: number,
  donorId: number,
  channel: Channel,
  purpose: string | null,
) {
  const rows = await db.any(sql.type(latestRow)`
    SELECT i.consent_mode, latest.purpose, latest.response
    FROM institutions i
    LEFT JOIN LATERAL (
      SELECT DISTINCT ON (purpose) purpose, response FROM consents
      WHERE institution_id = i.id AND donor_id = ${donorId} AND channel = ${channel}
        AND (purpose IS NULL OR purpose = ${purpose})
      ORDER BY purpose, captured_at DESC, id DESC
    ) latest ON true
    WHERE i.id = ${institutionId}`);
  const mode: ConsentMode = rows[0]?.consent_mode ?? 'opt_out';
  const of = (wanted: string | null) =>
    rows.find((row) => row.response !== null && row.purpose === wanted)?.response ?? null;
  return { mode, channelWide: of(null), forPurpose: purpose === null ? null : of(purpose) };
}

const hasContactPoint = (donor: DonorRow, channel: Channel): boolean => {
  switch (channel) {
    case 'email':
      return donor.email !== null || donor.emails.some((entry) => entry.status === 'active');
    case 'phone':
    case 'sms':
      return donor.phone !== null || donor.phones.some((entry) => entry.status === 'active');
    case 'mail':
      return mailingAddress(donor) !== null;
  }
};

/** GET /donors/{id}/eligibility (constituents.md §4); null when the donor is not the caller's. */
export async function donorEligibility(
  db: CommonQueryMethods,
  institutionId: number,
  donorId: number,
  channel: Channel,
  purpose: string | null,
): Promise<EligibilityResponse | null> {
  const donor = await findRow(db, donorTable, institutionId, donorId);
  if (!donor) return null;
  const { mode, channelWide, forPurpose } = await latestConsents(
    db,
    institutionId,
    donorId,
    channel,
    purpose,
  );
  const restrictions = new Set(donor.communication_restrictions);
  const found: Record<Reason, boolean> = {
    deceased: donor.status === 'deceased',
    restricted: restrictions.has('do_not_solicit') || restrictions.has(restrictionOf[channel]),
    no_contact_point: !hasContactPoint(donor, channel),
    // Either latest answer refusing is enough: a channel-wide opt-out wins over a purpose's opt-in.
    opted_out: channelWide === 'opt_out' || forPurpose === 'opt_out',
    no_opt_in: mode === 'opt_in' && channelWide !== 'opt_in' && forPurpose !== 'opt_in',
  };
  const reasons = eligibilityReasons.filter((reason) => found[reason]);
  return {
    object: 'eligibility',
    donor_id: donor.id,
    channel,
    purpose,
    allowed: reasons.length === 0,
    reasons,
  };
}

const isChannel = (value: string): value is Channel =>
  (consentChannels as readonly string[]).includes(value);

export const eligibility: RecordReadDescriptor = {
  name: 'eligibility',
  query: {
    channel: {
      required: true,
      parse(param, raw) {
        if (!isChannel(raw))
          throw errors.invalidParameter(
            param,
            `${param} must be one of: ${consentChannels.join(', ')}.`,
          );
        return raw;
      },
      schema: { type: 'string', enum: [...consentChannels] },
      description: 'The channel to contact the donor on.',
    },
    purpose: {
      required: false,
      // Trimmed, blank as none: as a consent's `purpose` is stored.
      parse(param, raw) {
        const value = raw.trim();
        if (value.length > MAX_PURPOSE || value.includes('\u0000') || !value.isWellFormed())
          throw errors.invalidParameter(
            param,
            `${param} must be text of at most ${MAX_PURPOSE} characters.`,
          );
        return value === '' ? null : value;
      },
      schema: { type: 'string', maxLength: MAX_PURPOSE },
      description:
        'What the contact is for (`newsletter`), as consents name it; at most 60 characters. Omitted (or blank): the channel as a whole.',
    },
  },
  read: (db, institutionId, id, query) =>
    donorEligibility(db, institutionId, id, query.channel as Channel, query.purpose ?? null),
  response: eligibilityResponse,
  text: {
    component: 'Eligibility',
    operationId: 'retrieveDonorEligibility',
    summary: 'Whether a donor may be contacted on a channel',
    description: [
      'Whether the donor may be contacted on `channel` (for `purpose`, when given), and if not, why. `allowed` is true exactly when `reasons` is empty; the reasons, each once and in this order:',
      '- `deceased`: the donor’s `status` is `deceased`.\n- `restricted`: the donor’s `communication_restrictions` hold `do_not_solicit` (every channel) or the channel’s own (`do_not_email`, `do_not_mail`, `do_not_call` for `phone`, `do_not_sms`).\n- `no_contact_point`: no primary or `active` listed point of the channel: `email`/`emails` for `email`, `phone`/`phones` for `phone` and `sms`, and for `mail` a `mailing_address` (so an out-of-season seasonal address does not count).\n- `opted_out`: the latest consent of the channel with no purpose, or with this purpose, is `opt_out` (a channel-wide opt-out wins over the purpose’s opt-in).\n- `no_opt_in`: the institution’s `consent_mode` is `opt_in` and neither of those latest consents is an `opt_in`.',
      'The latest consent is the one with the latest `captured_at` (then the greatest id), not the last recorded: an answer captured earlier and recorded later does not override a newer one. A consent for another purpose has no say. A donor of another institution is as absent as a missing one (404).',
    ].join('\n\n'),
  },
};
