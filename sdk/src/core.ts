import {
  APIConnectionError,
  APIError,
  connectionError,
  errorFromAnswer,
  type DonorGiftError,
} from './errors.js';
import { pagePromise, type ListEnvelope, type PagePromise } from './pagination.js';

/** What the client reads of an answer: `fetch`'s Response has all of it. */
export interface FetchResponseLike {
  status: number;
  headers: { get(name: string): string | null };
  text(): Promise<string>;
}

export interface FetchInit {
  method: string;
  headers: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
}

/** The global `fetch` of Node 20+, or any function that answers as it does. */
export type FetchLike = (url: string, init: FetchInit) => Promise<FetchResponseLike>;

export interface ClientOptions {
  /** The institution's API key (`dgs_key_…`), sent as X-Service-API-Key. */
  apiKey: string;
  /** The service's address, e.g. `http://127.0.0.1:3000` (a trailing `/api/v1` is accepted). */
  baseUrl: string;
  /** Retries after the first attempt; 0 means one attempt. Default 2. */
  maxRetries?: number;
  /** Per attempt, in milliseconds. Default 30000. */
  timeoutMs?: number;
  /** Defaults to the global `fetch`. */
  fetch?: FetchLike;
  /** How to wait between attempts; defaults to a timer (a test may record the waits instead). */
  sleep?: (ms: number) => Promise<void>;
}

export interface RequestOptions {
  maxRetries?: number;
  timeoutMs?: number;
}

export interface WriteOptions extends RequestOptions {
  /**
   * Sent on every attempt. Without one, the client makes one before the first attempt and sends
   * it again on each retry, so a retry after a lost answer replays rather than writing twice.
   */
  idempotencyKey?: string;
  /** Validates exactly as the real call would, and writes nothing. */
  dryRun?: boolean;
}

/** Of the answer that produced a result; not enumerable, so `JSON.stringify` is the record. */
export interface LastResponse {
  requestId: string | null;
  status: number;
  idempotentReplayed: boolean;
}

export type WithLastResponse<T> = T & { readonly lastResponse: LastResponse };

export type QueryValue = string | number | boolean | null | undefined;

interface Call {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  path: string;
  query?: object | undefined;
  /** Writes only; POST and PATCH always send a body (`{}` at the least). */
  body?: unknown;
  write: boolean;
  options?: WriteOptions | undefined;
}

const NEVER_RETRIED = new Set([400, 401, 403, 404, 422]);
const RETRIED = new Set([429, 500, 502, 503, 504]);
const MAX_RETRY_AFTER_SECONDS = 60;

/**
 * Whether an attempt that failed so may be sent again: the statuses that say the request is at
 * fault never are; past them, the service's Should-Retry wins over the status.
 */
export function isRetryable(error: DonorGiftError): boolean {
  if (error instanceof APIConnectionError) return true;
  if (error.status === null || NEVER_RETRIED.has(error.status)) return false;
  if (error.shouldRetry !== null) return error.shouldRetry;
  if (error.status === 409) return error.code === 'idempotency_key_in_flight';
  return RETRIED.has(error.status);
}

/**
 * The wait before retry `retry` (0 for the first): a Retry-After of 0 to 60 s exactly, else
 * min(0.5 s × 2^retry, 8 s) times a random factor in [0.75, 1] so that clients spread out.
 */
export function retryDelayMs(
  retry: number,
  retryAfterSeconds: number | null,
  random: () => number = Math.random,
): number {
  if (retryAfterSeconds !== null && retryAfterSeconds <= MAX_RETRY_AFTER_SECONDS)
    return retryAfterSeconds * 1000;
  return Math.min(500 * 2 ** retry, 8000) * (0.75 + 0.25 * random());
}

const sleepFor = (ms: number) =>
  new Promise<void>((resolve) => {
    setTimeout(resolve, ms);
  });

function checkCount(name: string, value: number | undefined, fallback: number, min: number) {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min)
    throw new RangeError(`${name} must be an integer of at least ${min}; got ${String(value)}.`);
  return value;
}

/** Path parameters: an id as the service prints it, percent-encoded. */
export const segment = (id: number | string): string => encodeURIComponent(String(id));

function serialise(body: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(body ?? {});
  } catch (error) {
    throw new TypeError(
      `The request body cannot be serialised as JSON (${error instanceof Error ? error.message : String(error)}); nothing was sent.`,
      { cause: error },
    );
  }
  if (typeof text !== 'string' || !text.startsWith('{'))
    throw new TypeError('The request body must be a JSON object; nothing was sent.');
  return text;
}

function queryString(query: object | undefined): string {
  if (!query) return '';
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query) as [string, QueryValue | QueryValue[]][]) {
    for (const item of Array.isArray(value) ? value : [value])
      if (item !== undefined && item !== null) search.append(name, String(item));
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}

function parseResult<T>(response: FetchResponseLike, text: string): T {
  try {
    return (text ? JSON.parse(text) : null) as T;
  } catch (cause) {
    throw new APIError(
      {
        status: response.status,
        type: 'api_error',
        code: null,
        message: `The service answered ${response.status} with a body that is not JSON.`,
        requestId: response.headers.get('Request-Id'),
        shouldRetry: null,
        retryAfter: null,
      },
      { cause },
    );
  }
}

const withLastResponse = <T>(result: T, lastResponse: LastResponse): WithLastResponse<T> => {
  if (typeof result === 'object' && result !== null)
    Object.defineProperty(result, 'lastResponse', { value: lastResponse, enumerable: false });
  return result as WithLastResponse<T>;
};

/** The transport every resource method goes through: one place for keys, retries and errors. */
export class Core {
  private readonly apiKey: string;
  private readonly origin: string;
  private readonly maxRetries: number;
  private readonly timeoutMs: number;
  private readonly fetch: FetchLike;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(options: ClientOptions) {
    if (typeof options !== 'object' || options === null)
      throw new TypeError('new DonorGift({ apiKey, baseUrl }): the options are required.');
    const { apiKey, baseUrl } = options;
    if (typeof apiKey !== 'string' || apiKey.trim() === '')
      throw new TypeError(
        'new DonorGift: apiKey is required (the institution’s API key, sent as X-Service-API-Key).',
      );
    if (typeof baseUrl !== 'string' || baseUrl.trim() === '')
      throw new TypeError(
        'new DonorGift: baseUrl is required (the service’s address, e.g. http://127.0.0.1:3000).',
      );
    let url: URL;
    try {
      url = new URL(baseUrl);
    } catch {
      throw new TypeError(`new DonorGift: baseUrl ${JSON.stringify(baseUrl)} is not a URL.`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new TypeError(`new DonorGift: baseUrl must be http or https, not ${url.protocol}`);
    if (url.search || url.hash)
      throw new TypeError('new DonorGift: baseUrl takes no query or fragment.');
    // The document's paths begin with /api/v1: a base that already names it is not repeated.
    const path = url.pathname.replace(/\/+$/, '').replace(/\/api\/v1$/, '');
    this.origin = `${url.origin}${path}`;
    this.apiKey = apiKey;
    this.maxRetries = checkCount('maxRetries', options.maxRetries, 2, 0);
    this.timeoutMs = checkCount('timeoutMs', options.timeoutMs, 30_000, 1);
    const fetch = options.fetch ?? (globalThis.fetch as FetchLike | undefined);
    if (typeof fetch !== 'function')
      throw new TypeError('new DonorGift: no global fetch (Node 20 or later has one).');
    this.fetch = fetch;
    this.sleep = options.sleep ?? sleepFor;
  }

  /**
   * One call. Everything that can be wrong with the arguments throws here, before anything is
   * sent; the body is serialised and the key made once, and every attempt sends those bytes.
   */
  request<T>(call: Call): Promise<WithLastResponse<T>> {
    const options = call.options ?? {};
    const maxRetries = checkCount('maxRetries', options.maxRetries, this.maxRetries, 0);
    const timeoutMs = checkCount('timeoutMs', options.timeoutMs, this.timeoutMs, 1);
    const headers: Record<string, string> = {
      Accept: 'application/json',
      'X-Service-API-Key': this.apiKey,
    };
    let body: string | undefined;
    if (call.write) {
      if (call.method !== 'DELETE') {
        body = serialise(call.body);
        headers['Content-Type'] = 'application/json';
      }
      headers['Idempotency-Key'] = options.idempotencyKey ?? crypto.randomUUID();
      if (options.dryRun) headers['Dry-Run'] = 'true';
    }
    const url = `${this.origin}${call.path}${queryString(call.query)}`;
    const init: FetchInit = {
      method: call.method,
      headers,
      ...(body === undefined ? {} : { body }),
    };
    return this.attempts<T>(url, init, maxRetries, timeoutMs);
  }

  private async attempts<T>(
    url: string,
    init: FetchInit,
    maxRetries: number,
    timeoutMs: number,
  ): Promise<WithLastResponse<T>> {
    for (let retry = 0; ; retry++) {
      const signal = AbortSignal.timeout(timeoutMs);
      let error: DonorGiftError;
      let answer: { response: FetchResponseLike; text: string } | null = null;
      try {
        const response = await this.fetch(url, { ...init, signal });
        answer = { response, text: await response.text() };
      } catch (thrown) {
        // Before or while the answer came: nothing is known of the write, so the same key and
        // bytes go again (a write that committed replays).
        error = connectionError(thrown, signal.aborted);
      }
      if (answer) {
        const { response, text } = answer;
        if (response.status >= 200 && response.status < 300)
          return withLastResponse(parseResult<T>(response, text), {
            requestId: response.headers.get('Request-Id'),
            status: response.status,
            idempotentReplayed: response.headers.get('Idempotent-Replayed') === 'true',
          });
        error = errorFromAnswer({ status: response.status, headers: response.headers, text });
      }
      if (retry >= maxRetries || !isRetryable(error!)) throw error!;
      await this.sleep(retryDelayMs(retry, error!.retryAfter));
    }
  }

  /** A list: the first page, which is also an iterable over every row of every page. */
  list<P extends ListEnvelope>(
    path: string,
    params: object | undefined,
    options: RequestOptions | undefined,
  ): PagePromise<P> {
    const {
      starting_after: _after,
      ending_before: _before,
      ...rest
    } = (params ?? {}) as Record<string, unknown>;
    return pagePromise<P>(
      this.request<P>({ method: 'GET', path, query: params, write: false, options }),
      // Later pages: the cursor the service gave, never one made here; the filters again (the
      // service checks they equal those pinned in the cursor).
      (cursor) =>
        this.request<P>({
          method: 'GET',
          path,
          query: { ...rest, starting_after: cursor },
          write: false,
          options,
        }),
    );
  }
}
