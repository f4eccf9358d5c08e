import ipaddr from 'ipaddr.js';

/**
 * Where webhooks may go and how often they are retried: set once per process from its
 * configuration (the API judges urls at create, the worker again at every delivery).
 */
interface WebhookPolicy {
  /** `host` or `host:port`, lower case: allowed over http and to any address. */
  allowedHosts: ReadonlySet<string>;
  /** Seconds to wait before each retry; its length is the number of retries. */
  retrySchedule: readonly number[];
  /** How long an attempt waits for the receiver's answer. */
  timeoutMs: number;
}

/** integration.md §2: about 3 days in all. */
export const DEFAULT_RETRY_SCHEDULE = [5, 300, 1800, 7200, 18000, 36000, 36000, 36000];
/** integration.md §2: a 2xx within this is a delivery. */
export const DEFAULT_TIMEOUT_MS = 10_000;

let policy: WebhookPolicy = {
  allowedHosts: new Set(),
  retrySchedule: DEFAULT_RETRY_SCHEDULE,
  timeoutMs: DEFAULT_TIMEOUT_MS,
};

export function setWebhookPolicy(config: {
  WEBHOOK_ALLOWED_HOSTS: readonly string[];
  WEBHOOK_RETRY_SCHEDULE: readonly number[];
  WEBHOOK_TIMEOUT_MS: number;
}): void {
  policy = {
    allowedHosts: new Set(config.WEBHOOK_ALLOWED_HOSTS.map((host) => host.toLowerCase())),
    retrySchedule: config.WEBHOOK_RETRY_SCHEDULE,
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
  };
}

export const retrySchedule = (): readonly number[] => policy.retrySchedule;

export const deliveryTimeoutMs = (): number => policy.timeoutMs;

/** The operator allowed this url's host (with or without its port) for development or tests. */
export function isAllowedHost(url: URL): boolean {
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  const host = url.hostname.toLowerCase();
  return policy.allowedHosts.has(host) || policy.allowedHosts.has(`${host}:${port}`);
}

/**
 * Only public unicast addresses: never loopback, private, link-local (which holds the cloud
 * metadata address 169.254.169.254), multicast, or any other reserved range. An IPv4 address
 * written inside IPv6 is judged as the IPv4 address it is.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress())
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  return parsed.range() === 'unicast';
}

/** The url's host, when it is an IP address written literally (IPv6 without its brackets). */
export function literalAddress(url: URL): string | null {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return ipaddr.isValid(host) ? host : null;
}

/** Why a webhook url may not be used, or null when it may. Names are resolved at delivery. */
export function urlProblem(raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute https URL';
  }
  const allowed = isAllowedHost(url);
  if (url.protocol !== 'https:' && !(allowed && url.protocol === 'http:'))
    return 'must be an https URL';
  if (url.username || url.password) return 'must not carry a user name or password';
  const address = literalAddress(url);
  if (address !== null && !allowed && !isPublicAddress(address))
    return 'must not point at a loopback, private, link-local, multicast or metadata address';
  return null;
}
