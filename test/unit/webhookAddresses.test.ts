import { isPublicAddress, setWebhookPolicy, urlProblem } from '../../common/webhooks/policy.js';

/** The SSRF rule of integration.md §2 on addresses: only public unicast ones are reached. */

beforeAll(() =>
  setWebhookPolicy({
    WEBHOOK_ALLOWED_HOSTS: [],
    WEBHOOK_RETRY_SCHEDULE: [],
    WEBHOOK_TIMEOUT_MS: 1_000,
  }),
);

/** Refused: each form an address that is not public can take, IPv6 ones carrying IPv4 above all. */
const refusedAddresses: readonly [string, string][] = [
  ['127.0.0.1', 'IPv4 loopback'],
  ['10.1.2.3', 'IPv4 private'],
  ['169.254.169.254', 'IPv4 link-local (cloud metadata)'],
  ['100.64.0.1', 'IPv4 shared (carrier-grade NAT)'],
  ['224.0.0.1', 'IPv4 multicast'],
  ['0.0.0.0', 'IPv4 unspecified'],
  ['::1', 'IPv6 loopback'],
  ['::', 'IPv6 unspecified'],
  ['fe80::1', 'IPv6 link-local'],
  ['fc00::1', 'IPv6 unique local'],
  ['ff02::1', 'IPv6 multicast'],
  ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
  ['::ffff:a9fe:a9fe', 'IPv4-mapped metadata, in hex'],
  ['::169.254.169.254', 'IPv4-compatible metadata'],
  ['::a9fe:a9fe', 'IPv4-compatible metadata, in hex'],
  ['::8.8.8.8', 'IPv4-compatible, even of a public address (deprecated, not routed)'],
  ['::ffff:0:a00:1', 'IPv4-translated (RFC 6145)'],
  ['64:ff9b::a00:1', 'NAT64 well-known prefix, private IPv4'],
  ['64:ff9b::a9fe:a9fe', 'NAT64 well-known prefix, metadata'],
  ['64:ff9b:1::a00:1', 'NAT64 local-use prefix'],
  ['2002:a00:1::1', '6to4 of a private IPv4'],
  ['2002:808:808::1', '6to4 (deprecated relays), even of a public IPv4'],
  ['2001::1', 'Teredo'],
  ['2001:db8::1', 'documentation'],
  ['2001:2::1', 'benchmarking'],
  ['2001:20::1', 'ORCHIDv2'],
  ['100::1', 'discard-only'],
  ['3fff::1', 'documentation (RFC 9637)'],
  ['5f00::1', 'SRv6 SIDs'],
  ['4000::1', 'outside global unicast 2000::/3'],
  ['fe80::1%eth0', 'link-local with a zone'],
  ['0x7f.1', 'IPv4 in a shorthand form'],
  ['not an address', 'not an address'],
];

test.each(refusedAddresses)('%s (%s) is not public', (address) => {
  expect(isPublicAddress(address)).toBe(false);
});

test.each([
  ['8.8.8.8', 'IPv4 public'],
  ['2606:4700:4700::1111', 'IPv6 global unicast'],
  ['::ffff:8.8.8.8', 'IPv4-mapped public IPv4 (a dual-stack socket reaches 8.8.8.8)'],
  ['64:ff9b::808:808', 'NAT64 well-known prefix of a public IPv4 (DNS64)'],
])('%s (%s) is public', (address) => {
  expect(isPublicAddress(address)).toBe(true);
});

test.each([
  'https://[::169.254.169.254]/',
  'https://[::a9fe:a9fe]/',
  'https://[64:ff9b:1::a00:1]/',
  'https://[64:ff9b::7f00:1]/',
  'https://[2002:7f00:1::1]/',
  'https://[2001::1]/',
  'https://[::ffff:0:7f00:1]/',
  'https://0x7f.1/',
])('the url %s names an address that is not public', (url) => {
  expect(urlProblem(url)).toMatch(/must not point at/);
});
