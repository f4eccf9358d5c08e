import { generateApiKey, type Principal } from '../common/auth/apiKeys.js';
import { RecentKeys } from '../api/recentKeys.js';

const principalOf = (apiKeyId: string): Principal => ({
  apiKeyId,
  institution: { id: 1, name: 'Test', currency: 'USD' },
  permissions: { '*': 'write' },
  expiresAt: null,
});

describe('RecentKeys', () => {
  test('finds a key it was told of until its time is up, and not after', () => {
    const keys = new RecentKeys(5_000);
    const issued = generateApiKey();
    keys.remember(issued.key, principalOf(issued.id), keys.mark(), 1_000);
    expect(keys.find(issued.key, 1_000)).toEqual(principalOf(issued.id));
    expect(keys.find(issued.key, 5_999)).toEqual(principalOf(issued.id));
    expect(keys.find(issued.key, 6_000)).toBeNull();
  });

  test('the same key id with another secret is not found', () => {
    const keys = new RecentKeys();
    const issued = generateApiKey();
    keys.remember(issued.key, principalOf(issued.id));
    const forged = `${issued.key.slice(0, -32)}${'A'.repeat(32)}`;
    expect(keys.find(forged)).toBeNull();
    expect(keys.find('not a key')).toBeNull();
  });

  test('a forgotten key is asked for again', () => {
    const keys = new RecentKeys();
    const issued = generateApiKey();
    keys.remember(issued.key, principalOf(issued.id));
    keys.forget(issued.id);
    expect(keys.find(issued.key)).toBeNull();
  });

  test('reads take a key only while revocations are heard; a gap in hearing forgets every key', () => {
    const keys = new RecentKeys();
    const issued = generateApiKey();
    keys.remember(issued.key, principalOf(issued.id));
    expect(keys.findForRead(issued.key)).toBeNull();
    expect(keys.find(issued.key)).not.toBeNull();
    keys.listening(true);
    expect(keys.find(issued.key)).toBeNull();
    keys.remember(issued.key, principalOf(issued.id));
    expect(keys.findForRead(issued.key)).toEqual(principalOf(issued.id));
    keys.listening(false);
    expect(keys.find(issued.key)).toBeNull();
    expect(keys.findForRead(issued.key)).toBeNull();
  });

  test('a confirmation read before a revocation was heard is not remembered', () => {
    const keys = new RecentKeys();
    keys.listening(true);
    const [revoked, other] = [generateApiKey(), generateApiKey()];
    const mark = keys.mark();
    keys.revoked(other.id);
    keys.remember(revoked.key, principalOf(revoked.id), mark);
    expect(keys.findForRead(revoked.key)).toBeNull();
    keys.remember(revoked.key, principalOf(revoked.id), keys.mark());
    expect(keys.findForRead(revoked.key)).not.toBeNull();
    keys.revoked(revoked.id);
    expect(keys.findForRead(revoked.key)).toBeNull();
  });

  test('holds at most its capacity, dropping the oldest confirmation', () => {
    const keys = new RecentKeys(60_000, 2);
    const [first, second, third] = [generateApiKey(), generateApiKey(), generateApiKey()];
    keys.remember(first.key, principalOf(first.id));
    keys.remember(second.key, principalOf(second.id));
    keys.remember(first.key, principalOf(first.id)); // confirmed again: now the newest
    keys.remember(third.key, principalOf(third.id));
    expect(keys.find(second.key)).toBeNull();
    expect(keys.find(first.key)).not.toBeNull();
    expect(keys.find(third.key)).not.toBeNull();
  });
});
