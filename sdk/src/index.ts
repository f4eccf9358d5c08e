export { DonorGift, DonorGift as default } from './client.js';
export type {
  ClientOptions,
  FetchInit,
  FetchLike,
  FetchResponseLike,
  LastResponse,
  RequestOptions,
  WithLastResponse,
  WriteOptions,
} from './core.js';
export {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  AuthenticationError,
  DonorGiftError,
  IdempotencyError,
  InvalidRequestError,
  PermissionError,
  RateLimitError,
  type ErrorCode,
  type ErrorType,
  type FieldError,
} from './errors.js';
export type { ListEnvelope, PagePromise, Row } from './pagination.js';
export type { Body, Id, OperationId, Query, Result } from './types.js';
export type { components, operations, paths } from './schema.js';
