import { z } from 'zod';
import {
  errors,
  MAX_FIELD_ERRORS,
  shouldRetryOf,
  type ApiError,
  type ErrorType,
  type FieldErrorCode,
} from '../errors.js';
import { toJsonSchema, type JsonSchema } from './jsonSchema.js';

/**
 * One instance of every error the API answers with (product.md §2), made by the very factories
 * that raise it, so that each documented status, type and example is the one the service sends.
 */
const samples = {
  invalid_json: errors.invalidJson(),
  invalid_parameter: errors.invalidParameter('limit', 'limit must be an integer.'),
  parameter_missing: errors.parameterMissing('award_cycle_id'),
  invalid_cursor: errors.invalidCursor('starting_after'),
  invalid_idempotency_key: errors.invalidIdempotencyKey(
    'An Idempotency-Key is 1 to 255 printable ASCII characters.',
  ),
  idempotency_key_required: errors.idempotencyKeyRequired(),
  missing_api_key: errors.missingApiKey(),
  invalid_api_key: errors.invalidApiKey(),
  api_key_expired: errors.apiKeyExpired(),
  insufficient_permissions: errors.insufficientPermissions(
    'read',
    'gifts',
    'POST /api/v1/gifts',
    'gifts:write',
  ),
  resource_not_found: errors.notFound('donor'),
  route_not_found: errors.routeNotFound('GET', '/api/v1/donations'),
  method_not_allowed: errors.methodNotAllowed('PUT', ['GET', 'PATCH', 'DELETE']),
  not_acceptable: errors.notAcceptable(['application/json', 'application/pdf']),
  idempotency_key_in_flight: errors.idempotencyKeyInFlight(),
  invalid_state_transition: errors.invalidStateTransition(
    'status',
    'An award cycle cannot go from open to draft.',
  ),
  resource_in_use: errors.resourceInUse('This donor has gifts; delete or move them first.'),
  resource_archived: errors.resourceArchived('This award cycle is archived and takes no changes.'),
  gift_locked: errors.giftLocked(
    'This gift has a receipt, so its amount cannot change. Void the receipt first, or record a refund.',
  ),
  donor_merged: errors.donorMerged(12),
  payload_too_large: errors.payloadTooLarge(),
  unsupported_media_type: errors.unsupportedMediaType(),
  validation_failed: errors.validationFailed([
    { param: 'last_name', code: 'required', message: 'is required' },
    { param: 'email', code: 'already_in_use', message: 'is already used by another donor' },
  ]),
  idempotency_key_request_mismatch: errors.idempotencyKeyMismatch(),
  internal_error: errors.internal(),
  rate_limited: errors.rateLimited(1),
  service_unavailable: errors.serviceUnavailable(),
  write_timeout: errors.writeTimeout(),
} satisfies Record<string, ApiError>;

export type ErrorCode = keyof typeof samples;

/** When each error happens, as the document tells a client. */
const when: Record<ErrorCode, string> = {
  invalid_json: 'The body is not parseable JSON, or not a JSON object.',
  invalid_parameter:
    'A query parameter or header has a value it cannot take, is repeated, or is not recognised.',
  parameter_missing: 'A required query parameter is absent from a first request.',
  invalid_cursor:
    'The cursor was tampered with, has expired, belongs to another institution or endpoint, or disagrees with a filter sent beside it.',
  invalid_idempotency_key:
    'The Idempotency-Key is empty, longer than 255 characters, not printable ASCII, or sent twice.',
  idempotency_key_required: 'A donor create without an email sent no Idempotency-Key.',
  missing_api_key: 'No X-Service-API-Key header.',
  invalid_api_key: 'The key is unknown, malformed or revoked (no hint which).',
  api_key_expired:
    'The key passed its `expires_at` (a rolled key, once its grace period ends): roll or replace it.',
  insufficient_permissions:
    'The key’s permissions do not include what the operation needs (its `x-required-permission`). Checked before the rate limit, the Idempotency-Key and the body: a dry run or a replay is refused too, and nothing is written.',
  resource_not_found:
    'No record with this id in the caller’s institution (another institution’s is just as absent).',
  route_not_found: 'No such path.',
  method_not_allowed: 'The path exists but not with this method; `Allow` lists the methods.',
  not_acceptable:
    'A record that is also a printable document (a receipt, a giving statement) was asked for with an `Accept` header that takes neither `application/json` nor `application/pdf`.',
  idempotency_key_in_flight: 'The first request with this Idempotency-Key is still running.',
  invalid_state_transition: 'A status change the state machine does not allow.',
  resource_in_use:
    'The record is still referenced by others, or (an erasure) the donor still has an active recurring gift or an open pledge.',
  resource_archived: 'The award cycle (of the award) is archived and takes no change.',
  gift_locked:
    'The gift’s money history is fixed: it is receipted, refunded or voided, so its money fields cannot change and it cannot be deleted. A correction is a refund or a void.',
  donor_merged:
    'The donor is a tombstone: merged into another (`status` `merged`; `POST /donors/{id}/merge` names the survivor in `merged_into_id`) or erased (`status` `erased`). It takes no update, delete, consent, erasure or merge into it.',
  payload_too_large: 'The body is larger than 100 KiB.',
  unsupported_media_type: 'A POST or PATCH without `Content-Type: application/json`.',
  validation_failed: 'The body fails validation; `errors` lists every problem found.',
  idempotency_key_request_mismatch:
    'The Idempotency-Key was used within 24 hours for a different request.',
  internal_error: 'A bug on our side. The body carries no stack trace or SQL.',
  rate_limited:
    'The API key made more requests this second than the service allows (`RATE_LIMIT_PER_SECOND`, 100 by default). `Retry-After` says when to try again; the request did nothing.',
  service_unavailable: 'PostgreSQL or Redis cannot be reached. `Retry-After` is set.',
  write_timeout:
    'The write was queued but its result did not come in time. Retrying with the same Idempotency-Key is safe and returns the outcome once known.',
};

const errorCodes = Object.keys(samples) as ErrorCode[];

function errorSample(code: ErrorCode): ApiError {
  const sample = samples[code];
  if (sample.body.code !== code)
    throw new Error(`error sample ${code} carries the code ${sample.body.code}`);
  return sample;
}

export const statusOf = (code: ErrorCode): number => errorSample(code).status;

/** Whether the code's answers carry Should-Retry (common/errors.ts says when). */
export const hasShouldRetry = (code: ErrorCode): boolean =>
  shouldRetryOf(errorSample(code)) !== null;

const errorTypes = [
  'invalid_request_error',
  'authentication_error',
  'permission_error',
  'idempotency_error',
  'rate_limit_error',
  'api_error',
] as const satisfies readonly ErrorType[];

const fieldErrorCodes = [
  'required',
  'unknown_field',
  'not_allowed',
  'invalid_type',
  'invalid_format',
  'invalid_value',
  'too_long',
  'out_of_range',
  'reference_not_found',
  'reference_inactive',
  'already_in_use',
  'insufficient_fund_balance',
  'designation_total_mismatch',
  'exceeds_pledge_balance',
  'exchange_rate_missing',
  'nothing_counted',
] as const satisfies readonly FieldErrorCode[];

/** Fails to compile when errors.ts gains a type or field code that the lists above lack. */
type Missing<All, Listed> = [Exclude<All, Listed>] extends [never] ? true : never;
const _everyType: Missing<ErrorType, (typeof errorTypes)[number]> = true;
const _everyFieldCode: Missing<FieldErrorCode, (typeof fieldErrorCodes)[number]> = true;

const REQUEST_ID_EXAMPLE = 'req_5f2c8e1a9b0d4c7e3a6f1b2d';

/** The one error envelope of product.md §2, with `code` one of the given codes. */
const envelopeWith = (codes: readonly [ErrorCode, ...ErrorCode[]]) =>
  z.object({
    error: z.object({
      type: z.enum(errorTypes),
      code: z
        .enum(codes)
        .describe('Stable and machine-readable: see the table in the introduction.'),
      message: z.string().describe('A human-readable summary; its wording may change.'),
      param: z
        .string()
        .optional()
        .describe('The field, query parameter or header at fault; dots for nested fields.'),
      errors: z
        .array(
          z.object({
            param: z.string().describe('The field at fault, e.g. `address.postal_code`.'),
            code: z.enum(fieldErrorCodes),
            message: z.string(),
          }),
        )
        .max(MAX_FIELD_ERRORS)
        .optional()
        .describe(
          `Every problem found (validation_failed only), not just the first; at most ${MAX_FIELD_ERRORS}, and the message says when there were more.`,
        ),
      request_id: z
        .string()
        .regex(/^req_[0-9a-f]{24}$/)
        .describe('Equals the Request-Id header.'),
    }),
  });

/**
 * Any error: its code is one of the catalogue's, so a client generated from the document (sdk/)
 * types `code` as exactly these.
 */
export const errorEnvelope = envelopeWith(errorCodes as [ErrorCode, ...ErrorCode[]]);

/** The envelope of one sample error, as the service renders it. */
export const exampleOf = (code: ErrorCode) => ({
  error: { ...errorSample(code).body, request_id: REQUEST_ID_EXAMPLE },
});

/** A response's schema: the envelope, with the code narrowed to those the operation can return. */
export function errorSchemaFor(codes: readonly ErrorCode[]): JsonSchema {
  const [first, ...rest] = codes;
  if (!first) throw new Error('an error response needs at least one code');
  return toJsonSchema(envelopeWith([first, ...rest]), 'output');
}

/** Markdown: one line per code, for a response's description. */
export const describeCodes = (codes: readonly ErrorCode[]): string =>
  codes.map((code) => `- \`${code}\`: ${when[code]}`).join('\n');

/** The table of the introduction: status, code, type and when, for every error. */
export function errorTable(): string {
  const rows = [...errorCodes]
    .sort((a, b) => statusOf(a) - statusOf(b))
    .map((code) => {
      const { status, body } = errorSample(code);
      return `| ${status} | \`${code}\` | \`${body.type}\` | ${when[code]} |`;
    });
  return ['| status | code | type | when |', '|---|---|---|---|', ...rows].join('\n');
}
