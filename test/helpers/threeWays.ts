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

/**
 * Runs one body as a real call, a `?dry_run=true` call and a `Dry-Run: true` call: the real call
 * is the expected 422, both dry runs answer exactly the same, and nothing in `snapshot` changes.
 */
export async function expectSameFailureThreeWays(
  service: TestService,
  path: string,
  method: 'POST' | 'PATCH',
  body: Record<string, unknown> | (() => Record<string, unknown>),
  expected: Array<{ param: string; code: string }>,
  snapshot: () => Promise<unknown>,
): Promise<void> {
  const make = typeof body === 'function' ? body : () => body;
  const before = await snapshot();
  const real = await service.call(method, path, { body: make() });
  const dryQuery = await service.call(method, `${path}?dry_run=true`, { body: make() });
  const dryHeader = await service.call(method, path, {
    body: make(),
    headers: { 'Dry-Run': 'true' },
  });

  expect(real.status).toBe(422);
  const error = (real.body as unknown as ErrorEnvelope).error;
  expect(error.type).toBe('invalid_request_error');
  expect(error.code).toBe('validation_failed');
  expect(error.request_id).toBe(real.headers.get('Request-Id'));
  expect(fieldErrors(real).sort(byParam)).toEqual([...expected].sort(byParam));
  expect(error.param).toBe(error.errors?.[0]?.param);
  for (const dry of [dryQuery, dryHeader]) {
    expect(dry.status).toBe(real.status);
    expect(withoutRequestId(dry)).toEqual(withoutRequestId(real));
  }
  expect(await snapshot()).toEqual(before);
}
