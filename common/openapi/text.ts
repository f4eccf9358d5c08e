import { errorTable } from './errorCatalogue.js';

/** The prose of the document: the cross-cutting rules of interface.md and product.md. */

/** A lead paragraph, then its points as a Markdown list. */
const rules = (lead: string, ...points: string[]) =>
  `${lead}\n\n${points.map((point) => `- ${point}`).join('\n')}`;

const idempotencyRules = rules(
  'Every write (create, update, delete) accepts an optional `Idempotency-Key` header: 1 to 255 printable ASCII characters, sent once (else 400 `invalid_idempotency_key`).',
  'Keys are scoped to the institution (two API keys of one institution share them) and compared byte for byte.',
  'The same key with the same request (method, route, path parameters and the body in canonical form: key order and whitespace do not matter, values, types, array order and null-versus-absent do) within 24 hours of the first call replays the original response (status, body and `Location`) with `Idempotent-Replayed: true`, and writes nothing. A replay is not re-validated.',
  'The same key with a different request: 422 `idempotency_key_request_mismatch`, even while the first call is still running.',
  'The same key and request while the first call is running: 409 `idempotency_key_in_flight`.',
  'Only 2xx responses are stored. After a 4xx, 5xx or 504 the key stays free: correct the request and retry with the same key. No write ever happens twice.',
  'After 24 hours a key is treated as new.',
  'A donor create without an `email` has no duplicate protection, so it must send a key (400 `idempotency_key_required`).',
);

const dryRunRules = rules(
  'Every write accepts the dry-run switch, as the query parameter `dry_run` or the header `Dry-Run`, with the same effect. Values are `true` or `false` in any letter case; any other value, a repeated query parameter, or query and header that disagree is 400 `invalid_parameter`.',
  'A dry run runs exactly the validation of the real call (required and conditionally required fields, allowed values, references to the institution’s records, unknown fields, uniqueness) and fails as the real call would.',
  'It writes nothing, enqueues nothing, fires no event and never touches the idempotency store: the same `Idempotency-Key` can then be used on the real call.',
  'So a dry run predicts the real call as the first use of its `Idempotency-Key`. What it does not predict is what a key already used would change: a replay of the stored response (`Idempotent-Replayed: true`), 409 `idempotency_key_in_flight` or 422 `idempotency_key_request_mismatch`.',
  'On success it answers with the real status code and the body the real call would return, except that a create returns `id` 0 and no `Location`; `created_at` and `updated_at` hold the time of the dry run. Update and delete dry runs return the body the real call would.',
);

const paginationRules = rules(
  'Every list answers one page in the list envelope, newest first (`id` descending, a total order: no row is skipped or repeated while paging).',
  '`limit`: an integer, default 25; values outside 1 to 100 are coerced into that range. Anything that is not an integer is 400 `invalid_parameter`.',
  'Page forward with `starting_after` set to the `next_cursor` of the last page, until `has_more` is false; page backward with `ending_before` set to a `previous_cursor`. If both are sent, `starting_after` wins.',
  'Filters are sent on the first request only: they are pinned into the cursor. A filter repeated beside a cursor must equal the pinned value, else 400 `invalid_cursor`.',
  'A cursor is an opaque signed token, valid only on the endpoint that issued it, for the institution that received it, for an hour (the operator’s `CURSOR_TTL_SECONDS`). A tampered, expired or foreign cursor is 400 `invalid_cursor`. To resume later, re-run the first request.',
  'A filter naming a record the caller cannot see gives an empty page, never an error. Unknown query parameters are 400 `invalid_parameter`.',
);

export function introduction(): string {
  return [
    'A multi-tenant HTTP/JSON API for an institution’s donors (and the tags that label them), gifts (and their tax receipts), funds, staff users, award cycles, students, scholarships and awards. Every record belongs to one institution, and a caller only ever sees and references its own institution’s records.',
    '## Conventions',
    [
      '- All paths begin with `/api/v1` (the version is part of the path).',
      '- Authenticate every request with the `X-Service-API-Key` header, except `GET /health`, `GET /ready`, `GET /metrics` (which takes the operator’s token when one is configured), this document and the docs page.',
      '- Request bodies are JSON objects sent with `Content-Type: application/json` (else 415), at most 100 KiB (else 413). A POST or PATCH without a body is 400 `invalid_json`, whatever its headers (`{}` is a body). A body may be compressed with `Content-Encoding` `gzip`, `deflate`, `br` or `zstd`: the limit applies to the decoded body, another encoding is 415, and a body that does not decode is 400 `invalid_json`. Strings are trimmed; an empty string for a required field is `required`; text must be valid Unicode (a lone UTF-16 surrogate such as `"\\ud800"` is 422 `invalid_value`), so what a write answers is what is stored.',
      '- Every resource has `id`, `object` (its name in snake case), `created_at` and `updated_at` (ISO 8601 UTC with milliseconds, e.g. `2026-11-21T10:00:00.000Z`).',
      '- Money (`amount` and the like) is a JSON number with at most 2 decimal places, greater than 0 and at most 999999999999.99, returned as a number (`100.5`, not `"100.50"`). Dates are `YYYY-MM-DD` real calendar dates, returned exactly as sent.',
      '- Create answers 201 with a `Location` header, update 200, delete 200 with `{"id": N, "object": "donor", "deleted": true}`. PATCH takes any subset of the writable fields and validates the merged record as a create would.',
      '- Every response carries a `Request-Id` header; an error body repeats it.',
      '- There is no sandbox or test-mode key: every call acts on real data, and a dry run is the only way to exercise a write without changing anything.',
    ].join('\n'),
    '## Dry runs',
    dryRunRules,
    '## Idempotency',
    idempotencyRules,
    '## Pagination',
    paginationRules,
    '## Errors',
    'Every error, including unknown routes, wrong methods and malformed JSON, answers in one envelope: `{"error": {"type", "code", "message", "param"?, "errors"?, "request_id"}}`. `param` names the field, query parameter or header at fault; `errors` (on 422 `validation_failed`) lists every problem found, each with a `param` (dots for nested fields: `address.postal_code`), a `code` and a `message`.',
    errorTable(),
    'Retrying: connection failures, 429, 500, 502, 503 and 504 may be retried with the same `Idempotency-Key` and the same body (a write then happens once), after `Retry-After` when it is sent; 400, 401, 403, 404 and 422 fail the same way again. Where the service knows better than the status, it says so in `Should-Retry: true|false`: `true` on 409 `idempotency_key_in_flight` and 503 `service_unavailable`, `false` on every 422. The client library in `sdk/` of the repository (`@donor-gift/client`) does all of this.',
    'Field `errors[].code` values: `required`, `unknown_field`, `not_allowed` (a field the role or type forbids), `invalid_type`, `invalid_format`, `invalid_value` (not an allowed value), `too_long`, `out_of_range`, `reference_not_found` (missing, or another institution’s), `reference_inactive` (closed fund, deactivated user, retired scholarship), `already_in_use` (uniqueness), `insufficient_fund_balance`.',
    'Rate limit: each API key may make up to 100 requests a second (the operator’s `RATE_LIMIT_PER_SECOND`), counted by each API process; beyond that the answer is 429 `rate_limited` with `Retry-After` in seconds, and the request does nothing. Every answer once the key is known says what is left: `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset` (seconds).',
  ].join('\n\n');
}
