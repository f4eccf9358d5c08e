import type { ApiResponse, TestService } from './harness.js';

export interface FieldErrorBody {
  param: string;
  code: string;
  message: string;
}

export interface ErrorEnvelope {
  error: {
    type: string;
    code: string;
    message: string;
    param?: string;
    errors?: FieldErrorBody[];
    request_id: string;
  };
}

/** The `errors[]` of a 422 as {param, code} pairs. */
export const fieldErrors = (response: ApiResponse) =>
  ((response.body as unknown as ErrorEnvelope).error.errors ?? []).map(({ param, code }) => ({
    param,
    code,
  }));

export const byParam = (a: { param: string; code: string }, b: { param: string; code: string }) =>
  a.param === b.param ? a.code.localeCompare(b.code) : a.param.localeCompare(b.param);

/** The error body without its request id, which differs per request. */
export const withoutRequestId = (response: ApiResponse) => ({
  ...(response.body as unknown as ErrorEnvelope).error,
  request_id: undefined,
});

export interface ExpectedError {
  status: number;
  code: string;
  /** The field errors of a 422; absent for errors that carry none (404, 409). */
  errors?: Array<{ param: string; code: string }>;
}

/** A 422 validation_failed with these field errors. */
export const invalid = (errors: Array<{ param: string; code: string }>): ExpectedError => ({
  status: 422,
  code: 'validation_failed',
  errors,
});

export interface ThreeWaysOptions {
  /** Headers for each of the three calls, made afresh per call (an Idempotency-Key, say). */
  headers?: () => Record<string, string>;
  /** The API key of the three calls (another tenant's); the harness's tenant by default. */
  key?: string;
}

/**
 * Runs one body as a real call, a `?dry_run=true` call and a `Dry-Run: true` call: the real call
 * is the expected error, both dry runs answer exactly the same, and nothing in `snapshot` changes.
 */
export async function expectSameErrorThreeWays(
  service: TestService,
  path: string,
  method: 'POST' | 'PATCH',
  body: Record<string, unknown> | (() => Record<string, unknown>),
  expected: ExpectedError,
  snapshot: () => Promise<unknown>,
  options: ThreeWaysOptions = {},
): Promise<void> {
  const make = typeof body === 'function' ? body : () => body;
  const headers = options.headers ?? (() => ({}));
  const before = await snapshot();
  const { key } = options;
  const real = await service.call(method, path, { key, body: make(), headers: headers() });
  const dryQuery = await service.call(method, `${path}?dry_run=true`, {
    key,
    body: make(),
    headers: headers(),
  });
  const dryHeader = await service.call(method, path, {
    key,
    body: make(),
    headers: { ...headers(), 'Dry-Run': 'true' },
  });

  expect(real.status).toBe(expected.status);
  const error = (real.body as unknown as ErrorEnvelope).error;
  expect(error.type).toBe('invalid_request_error');
  expect(error.code).toBe(expected.code);
  expect(error.request_id).toBe(real.headers.get('Request-Id'));
  if (expected.errors) {
    expect(fieldErrors(real).sort(byParam)).toEqual([...expected.errors].sort(byParam));
    for (const item of error.errors ?? []) expect(item.message).toEqual(expect.any(String));
    expect(error.param).toBe(error.errors?.[0]?.param);
  } else {
    expect(error.errors).toBeUndefined();
  }
  for (const dry of [dryQuery, dryHeader]) {
    expect(dry.status).toBe(real.status);
    expect(withoutRequestId(dry)).toEqual(withoutRequestId(real));
  }
  expect(await snapshot()).toEqual(before);
}

/** The 422 case of expectSameErrorThreeWays. */
export const expectSameFailureThreeWays = (
  service: TestService,
  path: string,
  method: 'POST' | 'PATCH',
  body: Record<string, unknown> | (() => Record<string, unknown>),
  expected: Array<{ param: string; code: string }>,
  snapshot: () => Promise<unknown>,
  options: ThreeWaysOptions = {},
) => expectSameErrorThreeWays(service, path, method, body, invalid(expected), snapshot, options);
