import { describeFilter, type FilterSpec } from '../pagination/listSpec.js';
import { DEFAULT_LIMIT, MAX_LIMIT } from '../pagination/listRequest.js';
import type { JsonSchema } from './jsonSchema.js';
import type { ListDoc } from './routeDoc.js';

/** Parameters and headers shared by many operations (components.parameters, components.headers). */

const booleanText = {
  type: 'string',
  pattern: '^([Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee])$',
  examples: ['true'],
};

const dryRunEffect =
  'Validate the write exactly as the real call would, and answer with its status and body (a create returns `id` 0 and no `Location`), without writing anything or using the Idempotency-Key. `true` or `false` in any letter case; `dry_run` and `Dry-Run` may both be sent but must agree (else 400 `invalid_parameter`).';

export const sharedParameters: Record<string, JsonSchema> = {
  IdempotencyKey: {
    name: 'Idempotency-Key',
    in: 'header',
    required: false,
    description:
      'Makes the write safe to retry: within 24 hours the same key with the same request replays the original 2xx response (with `Idempotent-Replayed: true`) instead of writing again; with a different request it is 422 `idempotency_key_request_mismatch`, and while the first call runs 409 `idempotency_key_in_flight`. Only 2xx responses are kept, so after an error the key is free. Scoped to the institution, case-sensitive, sent once.',
    schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7E]+$' },
  },
  DryRunHeader: {
    name: 'Dry-Run',
    in: 'header',
    required: false,
    description: dryRunEffect,
    schema: booleanText,
  },
  DryRunQuery: {
    name: 'dry_run',
    in: 'query',
    required: false,
    description: `${dryRunEffect} Sent once.`,
    schema: booleanText,
  },
  Limit: {
    name: 'limit',
    in: 'query',
    required: false,
    description: `Page size, default ${DEFAULT_LIMIT}. An integer outside 1 to ${MAX_LIMIT}, however many digits it has, is coerced into that range (not an error); anything else is 400 \`invalid_parameter\`. Not pinned: it may change from page to page.`,
    schema: { type: 'integer', default: DEFAULT_LIMIT },
  },
  StartingAfter: {
    name: 'starting_after',
    in: 'query',
    required: false,
    description:
      'A `next_cursor` from an earlier page of this list: pages forward. Wins over `ending_before` when both are sent.',
    schema: { type: 'string' },
  },
  EndingBefore: {
    name: 'ending_before',
    in: 'query',
    required: false,
    description:
      'A `previous_cursor` from an earlier page of this list: the page just before it, still newest first.',
    schema: { type: 'string' },
  },
};

const parameterRef = (name: keyof typeof sharedParameters & string): JsonSchema => ({
  $ref: `#/components/parameters/${name}`,
});

export const writeParameters = ['IdempotencyKey', 'DryRunHeader', 'DryRunQuery'].map(parameterRef);
export const pageParameters = ['Limit', 'StartingAfter', 'EndingBefore'].map(parameterRef);

export const sharedHeaders: Record<string, JsonSchema> = {
  RequestId: {
    description: 'Identifies the request in our logs; an error body repeats it as `request_id`.',
    schema: { type: 'string', pattern: '^req_[0-9a-f]{24}$' },
  },
  Location: {
    description: 'The path of the created record (also on a replay; not on a dry run).',
    schema: { type: 'string', pattern: '^/api/v1(/[a-z-]+/[1-9][0-9]*)+$' },
  },
  IdempotentReplayed: {
    description: '`true` when this is the stored response of an earlier call with the same key.',
    schema: { type: 'string', enum: ['true'] },
  },
  Allow: {
    description: 'The methods the path supports.',
    schema: { type: 'string' },
  },
  RetryAfter: {
    description: 'Seconds to wait before retrying.',
    schema: { type: 'string' },
  },
  ShouldRetry: {
    description:
      'On errors where the service knows better than the status code whether sending the same request again can succeed: `true` on 409 `idempotency_key_in_flight` (the first request will finish) and 503 `service_unavailable` (nothing was written or queued), `false` on every 422 (the same bytes fail the same way). Absent elsewhere: the status says it. A client that sees it obeys it.',
    schema: { type: 'string', enum: ['true', 'false'] },
  },
  RateLimitLimit: {
    description:
      'Requests this API key may make per second to this API process (`RATE_LIMIT_PER_SECOND`). Absent when the operator turned the limit off.',
    schema: { type: 'string', pattern: '^[1-9][0-9]*$' },
  },
  RateLimitRemaining: {
    description: 'What is left of that budget in the current second.',
    schema: { type: 'string', pattern: '^[0-9]+$' },
  },
  RateLimitReset: {
    description: 'Seconds until the budget is whole again.',
    schema: { type: 'string', pattern: '^[1-9][0-9]*$' },
  },
};

/** The key's rate budget, on every answer to an authenticated request. */
export const rateLimitHeaders = {
  'RateLimit-Limit': { $ref: '#/components/headers/RateLimitLimit' },
  'RateLimit-Remaining': { $ref: '#/components/headers/RateLimitRemaining' },
  'RateLimit-Reset': { $ref: '#/components/headers/RateLimitReset' },
};

export const headerRef = (name: keyof typeof sharedHeaders & string): JsonSchema => ({
  $ref: `#/components/headers/${name}`,
});

/** Every response carries Request-Id. */
export const requestIdHeader = { 'Request-Id': headerRef('RequestId') };

export const idPathParameter = (label: string): JsonSchema => ({
  name: 'id',
  in: 'path',
  required: true,
  description: `The ${label}'s id. An id of another institution is as absent as a missing one (404).`,
  schema: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
  example: 1,
});

function filterSchema(list: ListDoc, name: string, filter: FilterSpec): JsonSchema {
  const description = describeFilter(filter);
  switch (description?.kind) {
    case 'id':
      return { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER };
    case 'enum':
      return { type: 'string', enum: [...description.values] };
    case 'date':
      return { type: 'string', format: 'date' };
    case 'text':
      return { type: 'string', minLength: 1, maxLength: description.maxLength };
    case 'instant':
      return {
        anyOf: [
          { type: 'string', format: 'date' },
          { type: 'string', format: 'date-time' },
        ],
      };
    case 'pattern':
      return { type: 'string', pattern: description.pattern, examples: [description.example] };
    default:
      throw new Error(`the filter ${name} of ${list.endpoint} does not describe itself`);
  }
}

function filterDescription(
  name: string,
  filter: FilterSpec,
  note: string | undefined,
  required: boolean,
): string {
  const described = describeFilter(filter);
  const kind = described?.kind;
  const general = {
    id: `Only records with this \`${name}\`; an id the caller cannot see gives an empty page.`,
    enum: `Only records with this \`${name}\`.`,
    date: `A real calendar date written YYYY-MM-DD; ${
      described?.kind === 'date' && described.comparison === '<' ? 'exclusive' : 'inclusive'
    }.`,
    text: 'Case-insensitive “contains”, taken literally (no wildcards); trimmed, 1 to 200 characters.',
    instant:
      'An ISO 8601 timestamp with its time zone (`2026-11-21T10:00:00Z`, `2026-11-21T11:00:00.250+01:00`; to the millisecond), or a date `YYYY-MM-DD`, meaning the whole UTC day; inclusive.',
    pattern: '',
  }[kind ?? 'id'];
  const pinning = required
    ? 'Required (else 400 `parameter_missing`) and pinned into the cursor: later pages may send it again with the same value (a different one is 400 `invalid_cursor`).'
    : 'First request only: pinned into the cursor.';
  return [note, general, pinning].filter(Boolean).join(' ');
}

/** The query parameters of one list: its filters, from its ListSpec. */
export function filterParameters(list: ListDoc, notes: Record<string, string>): JsonSchema[] {
  for (const name of Object.keys(notes)) {
    if (!Object.hasOwn(list.filters, name))
      throw new Error(`a note names ${name}, which is no filter of ${list.endpoint}`);
  }
  return Object.entries(list.filters).map(([name, filter]) => ({
    name,
    in: 'query',
    // A later page may leave a required filter out (the cursor pins it), but sending it again is
    // always right, so clients are told to send it.
    required: (list.required ?? []).includes(name),
    description: filterDescription(name, filter, notes[name], (list.required ?? []).includes(name)),
    schema: filterSchema(list, name, filter),
  }));
}
