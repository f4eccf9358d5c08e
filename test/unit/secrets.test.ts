import fc from 'fast-check';
import { loadConfig } from '../../common/config.js';
import { sealedBody } from '../../common/idempotency/receipts.js';
import type { Logger } from '../../common/logger.js';
import { useSecretsFrom } from '../../common/secretsAtRest.js';
import {
  isSealed,
  keyIdOf,
  keyringOf,
  needsResealing,
  seal,
  SecretsError,
  unseal,
  type Keyring,
} from '../../common/secrets.js';

/**
 * The cipher of secrets at rest (trust.md §4) on its own: what is sealed opens again, only under
 * a key that is configured, and not once altered. What the service stores is tested through it
 * (test/secrets.test.ts).
 */

const KEY_A = 'a1'.repeat(32);
const KEY_B = 'b2'.repeat(32);
const ringA: Keyring = keyringOf({ SECRETS_KEY: KEY_A, CURSOR_SECRET: 'x'.repeat(32) });
const ringB: Keyring = keyringOf({ SECRETS_KEY: KEY_B, CURSOR_SECRET: 'x'.repeat(32) });
const ringBAfterA: Keyring = keyringOf({
  SECRETS_KEY: KEY_B,
  SECRETS_KEY_PREVIOUS: KEY_A,
  CURSOR_SECRET: 'x'.repeat(32),
});

test('any text sealed opens to itself, and the sealed form shows neither it nor the key', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'grapheme', maxLength: 200 }), (clear) => {
      const sealed = seal(clear, ringA);
      expect(isSealed(sealed)).toBe(true);
      expect(keyIdOf(sealed)).toBe(ringA.current.id);
      if (clear.length > 3) expect(sealed).not.toContain(clear);
      expect(sealed).not.toContain(KEY_A);
      expect(unseal(sealed, ringA)).toBe(clear);
    }),
  );
});

test('the same secret seals differently each time (a fresh nonce)', () => {
  expect(seal('whsec_same', ringA)).not.toBe(seal('whsec_same', ringA));
});

test('another key cannot open it, and says which key it would need', () => {
  const sealed = seal('whsec_abc', ringA);
  expect(() => unseal(sealed, ringB)).toThrow(SecretsError);
  expect(() => unseal(sealed, ringB)).toThrow(`sealed under key ${ringA.current.id}`);
});

test('SECRETS_KEY_PREVIOUS opens what the key before sealed; new values go under the current key', () => {
  const old = seal('whsec_old', ringA);
  expect(unseal(old, ringBAfterA)).toBe('whsec_old');
  expect(needsResealing(old, ringBAfterA)).toBe(true);
  const fresh = seal('whsec_new', ringBAfterA);
  expect(keyIdOf(fresh)).toBe(ringB.current.id);
  expect(needsResealing(fresh, ringBAfterA)).toBe(false);
  expect(() => unseal(fresh, ringA)).toThrow(SecretsError);
});

test('any change to a sealed value is detected, never opened to something else', () => {
  const sealed = seal('whsec_tamper_me', ringA);
  const prefix = `sealed:v1:${ringA.current.id}:`;
  const data = Buffer.from(sealed.slice(prefix.length), 'base64url');
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: data.length - 1 }),
      fc.integer({ min: 1, max: 255 }),
      (index, flip) => {
        const altered = Buffer.from(data);
        altered[index] = altered[index]! ^ flip;
        expect(() => unseal(prefix + altered.toString('base64url'), ringA)).toThrow(SecretsError);
      },
    ),
  );
  expect(() => unseal(sealed.slice(0, -4), ringA)).toThrow(SecretsError);
});

test('a value stored in clear before sealing reads as it is, and is due for sealing', () => {
  expect(unseal('whsec_clear', ringA)).toBe('whsec_clear');
  expect(needsResealing('whsec_clear', ringA)).toBe(true);
});

test('without SECRETS_KEY a development key is derived from CURSOR_SECRET, the same in every process', () => {
  const one = keyringOf({ CURSOR_SECRET: 'c'.repeat(40) });
  const two = keyringOf({ CURSOR_SECRET: 'c'.repeat(40) });
  expect(one.derived).toBe(true);
  expect(unseal(seal('whsec_dev', one), two)).toBe('whsec_dev');
  expect(keyringOf({ CURSOR_SECRET: 'd'.repeat(40) }).current.id).not.toBe(one.current.id);
});

test("a receipt's body keeps null in place of its secrets, sealed beside it", () => {
  const body = { id: 1, object: 'webhook_endpoint', secret: 'whsec_zzz', created_at: 't' };
  const kept = sealedBody(body, ['secret']);
  expect(Object.keys(kept.body)).toEqual(Object.keys(body));
  expect(kept.body.secret).toBeNull();
  expect(JSON.parse(unseal(kept.sealedFields!))).toEqual({ secret: 'whsec_zzz' });
  expect(sealedBody(body, undefined)).toEqual({ body, sealedFields: null });
});

test('a process without SECRETS_KEY warns that its key is derived; with one it says nothing', () => {
  const warnings: string[] = [];
  const logger = { warn: (message: string) => warnings.push(message) } as unknown as Logger;
  const base = {
    DATABASE_URL: 'postgres://localhost/db',
    REDIS_URL: 'redis://localhost:6379',
    CURSOR_SECRET: 'x'.repeat(40),
  };
  useSecretsFrom(loadConfig(base), logger);
  expect(warnings).toEqual([expect.stringMatching(/^SECRETS_KEY is not set: .*development key/)]);
  useSecretsFrom(loadConfig({ ...base, SECRETS_KEY: KEY_A }), logger);
  expect(warnings).toHaveLength(1);
});

describe('configuration', () => {
  const base = {
    DATABASE_URL: 'postgres://localhost/db',
    REDIS_URL: 'redis://localhost:6379',
    CURSOR_SECRET: 'x'.repeat(40),
  };
  const production = {
    ...base,
    NODE_ENV: 'production',
    METRICS_TOKEN: 'm'.repeat(20),
    ADMIN_TOKEN: 'a'.repeat(20),
    SECRETS_KEY: KEY_A,
  };

  test('production starts with its tokens and key', () => {
    expect(loadConfig(production).SECRETS_KEY).toBe(KEY_A);
  });

  test.each(['METRICS_TOKEN', 'ADMIN_TOKEN', 'SECRETS_KEY'])(
    'production without %s is refused in one line naming it',
    (name) => {
      expect(() => loadConfig({ ...production, [name]: '' })).toThrow(
        new RegExp(`^Invalid configuration: NODE_ENV=production needs ${name} \\(`),
      );
    },
  );

  test('outside production none of them is needed; an empty value is unset', () => {
    const config = loadConfig({ ...base, METRICS_TOKEN: '', SECRETS_KEY: '' });
    expect(config.METRICS_TOKEN).toBeUndefined();
    expect(config.SECRETS_KEY).toBeUndefined();
  });

  test.each([
    ['SECRETS_KEY', 'ab'.repeat(16)],
    ['SECRETS_KEY', 'zz'.repeat(32)],
    ['SECRETS_KEY_PREVIOUS', 'ab'.repeat(33)],
  ])('%s of the wrong form is refused in one line', (name, value) => {
    expect(() => loadConfig({ ...base, [name]: value })).toThrow(
      `Invalid configuration: ${name} must be 32 bytes as 64 hex characters`,
    );
  });
});
