import { timingSafeEqual } from 'node:crypto';
import { digestOf, keyIdOf, type Principal } from '../common/auth/apiKeys.js';

interface Entry {
  digest: Buffer;
  principal: Principal;
  until: number;
}

/**
 * Keys this API process confirmed against Postgres in the last few seconds. A real write may be
 * admitted on one without asking Postgres again, because the worker confirms the key once more
 * inside the write itself (runWrite): a revoked key writes nothing from the moment its revocation
 * commits. Reads and dry runs are answered here, so they never take a key from this list.
 */
export class RecentKeys {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly ttlMs = 5_000,
    private readonly capacity = 10_000,
  ) {}

  /** The principal of a key confirmed within the last `ttlMs`, if the presented key is that key. */
  find(presented: string, now = Date.now()): Principal | null {
    const keyId = keyIdOf(presented);
    const entry = keyId ? this.entries.get(keyId) : undefined;
    if (!entry) return null;
    if (entry.until <= now) {
      this.entries.delete(entry.principal.apiKeyId);
      return null;
    }
    return timingSafeEqual(entry.digest, digestOf(presented)) ? entry.principal : null;
  }

  /** Records a key Postgres just confirmed. */
  remember(presented: string, principal: Principal, now = Date.now()): void {
    const id = principal.apiKeyId;
    this.entries.delete(id);
    if (this.entries.size >= this.capacity) {
      // The oldest confirmation goes first (a Map iterates in insertion order).
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(id, { digest: digestOf(presented), principal, until: now + this.ttlMs });
  }

  /** Drops a key a worker found revoked. */
  forget(apiKeyId: string): void {
    this.entries.delete(apiKeyId);
  }
}
