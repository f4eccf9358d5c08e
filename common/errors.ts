/**
 * The one error vocabulary of the service (product.md §2). Commands, middleware and the worker
 * raise ApiError; the API renders it into the documented envelope.
 */
export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'idempotency_error'
  | 'rate_limit_error'
  | 'api_error';

export type FieldErrorCode =
  | 'required'
  | 'unknown_field'
  | 'not_allowed'
  | 'invalid_type'
  | 'invalid_format'
  | 'invalid_value'
  | 'too_long'
  | 'out_of_range'
  | 'reference_not_found'
  | 'reference_inactive'
  | 'already_in_use'
  | 'insufficient_fund_balance'
  | 'designation_total_mismatch'
  | 'exceeds_pledge_balance'
  | 'exchange_rate_missing'
  | 'nothing_counted';

export interface FieldError {
  param: string;
  code: FieldErrorCode;
  message: string;
}

export interface ErrorBody {
  type: ErrorType;
  code: string;
  message: string;
  param?: string;
  errors?: FieldError[];
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: ErrorBody,
    readonly headers: Record<string, string> = {},
  ) {
    super(body.message);
  }
}

/**
 * The Should-Retry header, where the service knows better than the status code: a 409
 * `idempotency_key_in_flight` ends when the first request does, and a 503 `service_unavailable`
 * is answered only when nothing was written or queued, so both are safe to send again; a 422 is
 * wrong in its bytes and fails the same way however often it is sent. Null: the status says it.
 */
export function shouldRetryOf(error: ApiError): 'true' | 'false' | null {
  if (error.body.code === 'idempotency_key_in_flight') return 'true';
  if (error.body.code === 'service_unavailable') return 'true';
  if (error.status === 422) return 'false';
  return null;
}

const invalid = (status: number, code: string, message: string, param?: string) =>
  new ApiError(status, {
    type: 'invalid_request_error',
    code,
    message,
    ...(param ? { param } : {}),
  });

/**
 * A 422 lists every problem up to this many: a body of thousands of unknown fields must not make
 * an answer of thousands of entries (the document states the bound as maxItems).
 */
export const MAX_FIELD_ERRORS = 100;

export const errors = {
  invalidJson: (message = 'The request body must be a JSON object.') =>
    invalid(400, 'invalid_json', message),
  /** A POST or PATCH with no body at all, whatever its headers. */
  emptyBody: () =>
    invalid(400, 'invalid_json', 'This request needs a JSON object as its body ({} at the least).'),
  invalidParameter: (param: string, message: string) =>
    invalid(400, 'invalid_parameter', message, param),
  parameterMissing: (param: string) =>
    invalid(400, 'parameter_missing', `The query parameter ${param} is required.`, param),
  invalidCursor: (param: string) =>
    invalid(
      400,
      'invalid_cursor',
      'The cursor is invalid, expired, or does not match this request. Re-run the first request.',
      param,
    ),
  invalidIdempotencyKey: (message: string) =>
    new ApiError(400, {
      type: 'idempotency_error',
      code: 'invalid_idempotency_key',
      message,
      param: 'Idempotency-Key',
    }),
  idempotencyKeyRequired: () =>
    new ApiError(400, {
      type: 'idempotency_error',
      code: 'idempotency_key_required',
      message:
        'A donor without an email has no duplicate protection: send an Idempotency-Key header.',
      param: 'Idempotency-Key',
    }),
  missingApiKey: () =>
    new ApiError(401, {
      type: 'authentication_error',
      code: 'missing_api_key',
      message: 'Send your API key in the X-Service-API-Key header.',
    }),
  invalidApiKey: () =>
    new ApiError(401, {
      type: 'authentication_error',
      code: 'invalid_api_key',
      message: 'The API key is not valid.',
    }),
  /** The one hint of expiry we give, so that an integration knows to roll its key (trust.md §2). */
  apiKeyExpired: () =>
    new ApiError(401, {
      type: 'authentication_error',
      code: 'api_key_expired',
      message: 'The API key has expired. Use the key it was rolled to, or make a new one.',
    }),
  insufficientPermissions: (has: string, group: string, route: string, needs: string) =>
    new ApiError(403, {
      type: 'permission_error',
      code: 'insufficient_permissions',
      message: `This key has ${has === 'none' ? 'no' : has} access to ${group}; ${route} needs ${needs}.`,
    }),
  notFound: (resource: string) => invalid(404, 'resource_not_found', `No such ${resource}.`, 'id'),
  routeNotFound: (method: string, path: string) =>
    invalid(404, 'route_not_found', `No route for ${method} ${path}.`),
  methodNotAllowed: (method: string, allowed: string[]) =>
    new ApiError(
      405,
      {
        type: 'invalid_request_error',
        code: 'method_not_allowed',
        message: `${method} is not allowed here. Allowed: ${allowed.join(', ')}.`,
      },
      { Allow: allowed.join(', ') },
    ),
  notAcceptable: (types: readonly string[]) =>
    invalid(
      406,
      'not_acceptable',
      `This resource is answered as ${types.join(' or ')}; send an Accept header that takes one of them.`,
    ),
  idempotencyKeyInFlight: () =>
    new ApiError(409, {
      type: 'idempotency_error',
      code: 'idempotency_key_in_flight',
      message:
        'A request with this Idempotency-Key is still being processed. Retry after it finishes.',
    }),
  idempotencyKeyMismatch: () =>
    new ApiError(422, {
      type: 'idempotency_error',
      code: 'idempotency_key_request_mismatch',
      message:
        'This Idempotency-Key was already used with a different request. Use a new key for a new request.',
    }),
  invalidStateTransition: (param: string, message: string) =>
    invalid(409, 'invalid_state_transition', message, param),
  resourceInUse: (message: string) => invalid(409, 'resource_in_use', message),
  resourceArchived: (message: string) => invalid(409, 'resource_archived', message),
  /** giving.md §3–4: money history is append-only; a correction is a refund or a void. */
  giftLocked: (message: string) => invalid(409, 'gift_locked', message),
  /** constituents.md §5: a merged donor is a tombstone; its records live on its survivor. */
  donorMerged: (survivorId: number) =>
    invalid(
      409,
      'donor_merged',
      `This donor was merged into donor ${survivorId}, which now holds its records; write to that donor instead.`,
      'id',
    ),
  /**
   * constituents.md §6: an erased donor is a tombstone too (the spec's `donor_merged` for a merge
   * into it): it takes no write, and its records are no one else's to move to.
   */
  donorErased: () =>
    invalid(
      409,
      'donor_merged',
      'This donor was erased: its personal data is gone and it takes no more writes.',
      'id',
    ),
  /** A merged or erased donor: the one 409 a tombstone answers to a write of it. */
  donorTombstone: (donor: { status: string; merged_into_id: number | null }) =>
    donor.merged_into_id !== null
      ? errors.donorMerged(donor.merged_into_id)
      : donor.status === 'erased'
        ? errors.donorErased()
        : null,
  payloadTooLarge: () =>
    invalid(413, 'payload_too_large', 'The request body is larger than 100 KiB.'),
  unsupportedMediaType: () =>
    invalid(
      415,
      'unsupported_media_type',
      'Send the request body as Content-Type: application/json.',
    ),
  validationFailed: (fieldErrors: FieldError[]) => {
    const first = fieldErrors[0];
    const listed = fieldErrors.slice(0, MAX_FIELD_ERRORS);
    return new ApiError(422, {
      type: 'invalid_request_error',
      code: 'validation_failed',
      message:
        fieldErrors.length === 1 && first
          ? `${first.param}: ${first.message}`
          : fieldErrors.length > MAX_FIELD_ERRORS
            ? `The request has ${fieldErrors.length} problems; the first ${MAX_FIELD_ERRORS} are listed.`
            : `The request has ${fieldErrors.length} invalid fields.`,
      ...(first ? { param: first.param } : {}),
      errors: listed,
    });
  },
  internal: () =>
    new ApiError(500, {
      type: 'api_error',
      code: 'internal_error',
      message: 'Something went wrong on our side. The request id identifies it in our logs.',
    }),
  serviceUnavailable: (
    message = 'The service cannot reach its database or queue right now. Retry shortly.',
  ) =>
    new ApiError(
      503,
      {
        type: 'api_error',
        code: 'service_unavailable',
        message,
      },
      { 'Retry-After': '1' },
    ),
  rateLimited: (retryAfterSeconds: number) =>
    new ApiError(
      429,
      {
        type: 'rate_limit_error',
        code: 'rate_limited',
        message: `Too many requests with this API key. Retry after ${retryAfterSeconds} s.`,
      },
      { 'Retry-After': String(retryAfterSeconds) },
    ),
  writeTimeout: () =>
    new ApiError(504, {
      type: 'api_error',
      code: 'write_timeout',
      message:
        'The write was accepted but has not finished yet. Retry with the same Idempotency-Key to get its outcome.',
    }),
};
