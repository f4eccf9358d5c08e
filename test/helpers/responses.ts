import type { ApiResponse } from './harness.js';

/** A timestamp as the API writes it: ISO 8601, UTC, milliseconds. */
export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** The body of a create that must succeed; anything but 201 fails the test with the answer. */
export async function created<T = Record<string, unknown>>(
  response: Promise<ApiResponse<T>>,
): Promise<T> {
  const result = await response;
  if (result.status !== 201)
    throw new Error(`expected 201, got ${result.status}: ${JSON.stringify(result.body)}`);
  return result.body;
}
