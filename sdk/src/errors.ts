import type { components } from './schema.js';

type Envelope = components['schemas']['Error']['error'];

/** Every code of the service's error catalogue: a code outside it does not type-check. */
export type ErrorCode = Envelope['code'];
/** The envelope's types, and `permission_error` for a 403 (which carries no envelope type). */
export type ErrorType = Envelope['type'] | 'permission_error';
export type FieldError = NonNullable<Envelope['errors']>[number];

export interface ErrorFields {
  /** The HTTP status; null when no answer came (a connection error or a timeout). */
  status: number | null;
  type: ErrorType;
  /** Null when the answer carried no envelope (a proxy's 502, say) or none came. */
  code: ErrorCode | null;
  message: string;
  param?: string | undefined;
  errors?: FieldError[] | undefined;
  requestId: string | null;
  /** The service's Should-Retry header, when it sent one. */
  shouldRetry: boolean | null;
  /** Seconds, from Retry-After, when sent. */
  retryAfter: number | null;
}

/** Any failure of a call; the subclass says which kind (`instanceof` works on each). */
export class DonorGiftError extends Error {
  readonly status: number | null;
  readonly type: ErrorType;
  readonly code: ErrorCode | null;
  readonly param: string | undefined;
  readonly errors: FieldError[] | undefined;
  readonly requestId: string | null;
  readonly shouldRetry: boolean | null;
  /** Seconds the service asked to wait (Retry-After, on 429 and 503), else null. */
  readonly retryAfter: number | null;

  constructor(fields: ErrorFields, options?: { cause?: unknown }) {
    super(fields.message, options);
    this.name = new.target.name;
    this.status = fields.status;
    this.type = fields.type;
    this.code = fields.code;
    this.param = fields.param;
    this.errors = fields.errors;
    this.requestId = fields.requestId;
    this.shouldRetry = fields.shouldRetry;
    this.retryAfter = fields.retryAfter;
  }
}

/** 400, 404, 405, 409, 413, 415, 422 with type invalid_request_error: the request is at fault. */
export class InvalidRequestError extends DonorGiftError {}
/** 401: the API key is missing, unknown or revoked. */
export class AuthenticationError extends DonorGiftError {}
/** 403. */
export class PermissionError extends DonorGiftError {}
/** The Idempotency-Key: malformed, still in flight (409) or used for another request (422). */
export class IdempotencyError extends DonorGiftError {}
/** 429, after the retries: `retryAfter` says when the key may call again. */
export class RateLimitError extends DonorGiftError {}
/** 5xx, or any answer with no envelope: the service (or what is in front of it) failed. */
export class APIError extends DonorGiftError {}
/** No answer: the connection failed or dropped. */
export class APIConnectionError extends APIError {}
/** No answer within `timeoutMs`. */
export class APIConnectionTimeoutError extends APIConnectionError {}

const classes: Record<ErrorType, new (fields: ErrorFields) => DonorGiftError> = {
  invalid_request_error: InvalidRequestError,
  authentication_error: AuthenticationError,
  permission_error: PermissionError,
  idempotency_error: IdempotencyError,
  rate_limit_error: RateLimitError,
  api_error: APIError,
};

const typeByStatus = (status: number): ErrorType =>
  status === 401
    ? 'authentication_error'
    : status === 403
      ? 'permission_error'
      : status === 429
        ? 'rate_limit_error'
        : status >= 500 || status < 400
          ? 'api_error'
          : 'invalid_request_error';

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Seconds from a Retry-After of seconds or an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | null {
  if (value === null || value.trim() === '') return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return seconds >= 0 ? seconds : null;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, (date - now) / 1000);
}

export interface ErrorAnswer {
  status: number;
  headers: { get(name: string): string | null };
  text: string;
}

/**
 * The error of an answer, whatever its body: the envelope when there is one, else a typed error
 * made from the status alone (an empty 502 from a proxy is still an APIError).
 */
export function errorFromAnswer({ status, headers, text }: ErrorAnswer): DonorGiftError {
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    // Not JSON (an HTML page from a proxy): the status alone says what happened.
  }
  const envelope = isRecord(parsed) && isRecord(parsed.error) ? parsed.error : null;
  const shouldRetryHeader = headers.get('Should-Retry');
  const type =
    envelope && typeof envelope.type === 'string' && envelope.type in classes
      ? (envelope.type as ErrorType)
      : typeByStatus(status);
  const fields: ErrorFields = {
    status,
    type,
    code: envelope && typeof envelope.code === 'string' ? (envelope.code as ErrorCode) : null,
    message:
      envelope && typeof envelope.message === 'string'
        ? envelope.message
        : `The service answered ${status} without an error body.`,
    param: envelope && typeof envelope.param === 'string' ? envelope.param : undefined,
    errors:
      envelope && Array.isArray(envelope.errors) ? (envelope.errors as FieldError[]) : undefined,
    requestId:
      envelope && typeof envelope.request_id === 'string'
        ? envelope.request_id
        : headers.get('Request-Id'),
    shouldRetry: shouldRetryHeader === 'true' ? true : shouldRetryHeader === 'false' ? false : null,
    retryAfter: parseRetryAfter(headers.get('Retry-After')),
  };
  return new classes[type](fields);
}

export function connectionError(cause: unknown, timedOut: boolean): APIConnectionError {
  const fields: ErrorFields = {
    status: null,
    type: 'api_error',
    code: null,
    message: timedOut
      ? 'No answer from the service within timeoutMs.'
      : `Could not reach the service: ${cause instanceof Error ? cause.message : String(cause)}`,
    requestId: null,
    shouldRetry: null,
    retryAfter: null,
  };
  return timedOut
    ? new APIConnectionTimeoutError(fields, { cause })
    : new APIConnectionError(fields, { cause });
}
