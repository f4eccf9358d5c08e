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

/** IPv6 forms that carry an IPv4 address in their last 32 bits and reach that address. */
const CARRYING_IPV4: readonly [ipaddr.IPv6, number][] = [
  // IPv4-mapped (::ffff:a.b.c.d): a dual-stack socket connects to the IPv4 address itself.
  ipaddr.parseCIDR('::ffff:0:0/96') as [ipaddr.IPv6, number],
  // NAT64's well-known prefix (RFC 6052): a translator forwards to the IPv4 address.
  ipaddr.parseCIDR('64:ff9b::/96') as [ipaddr.IPv6, number],
];
/** Global unicast (RFC 4291): the only IPv6 block allocated for the public internet. */
const GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3') as [ipaddr.IPv6, number];

/**
 * Only public unicast addresses: never loopback, private, link-local (which holds the cloud
 * metadata address 169.254.169.254), multicast, or any other reserved range. An allow rule, not
 * a deny list: IPv4 must be ipaddr.js's `unicast`; IPv6 must be `unicast` within 2000::/3, which
 * leaves out every special-purpose block (IPv4-compatible ::a.b.c.d, NAT64's local-use
 * 64:ff9b:1::/48, 6to4 2002::/16, Teredo 2001::/32, documentation, ORCHID and the rest). The two
 * IPv6 forms that reach an IPv4 address as such (IPv4-mapped, NAT64's 64:ff9b::/96) are judged
 * as the IPv4 address they carry.
 */
export function isPublicAddress(address: string): boolean {
  const parsed = parseAddress(address);
  if (!parsed) return false;
  if (parsed.kind() === 'ipv4') return parsed.range() === 'unicast';
  const v6 = parsed as ipaddr.IPv6;
  if (CARRYING_IPV4.some((range) => v6.match(range))) {
    const [high, low] = v6.parts.slice(6) as [number, number];
    return isPublicAddress(`${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`);
  }
  return v6.match(GLOBAL_UNICAST) && v6.range() === 'unicast';
}

/**
 * An address as it is connected to. IPv6 goes through the WHATWG URL parser first: ipaddr.js
 * reads the dotted form `::a.b.c.d` (IPv4-compatible, which resolvers print) as `::ffff:a.b.c.d`
 * (IPv4-mapped), another address; a zone (`fe80::1%eth0`) is refused with it. IPv4 in its one
 * dotted-decimal form only: `ipaddr.isValid` would take `0x7f.1` or `2130706433` as well.
 */
function parseAddress(address: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  if (ipaddr.IPv4.isValidFourPartDecimal(address)) return ipaddr.IPv4.parse(address);
  if (!address.includes(':')) return null;
  let canonical: string;
  try {
    canonical = new URL(`http://[${address}]/`).hostname.slice(1, -1);
  } catch {
    return null;
  }
  return ipaddr.IPv6.isValid(canonical) ? ipaddr.IPv6.parse(canonical) : null;
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
