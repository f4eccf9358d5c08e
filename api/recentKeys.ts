import { timingSafeEqual } from 'node:crypto';
import { digestOf, keyIdOf, type Principal } from '../common/auth/apiKeys.js';
import type { RevocationEvents } from '../common/auth/revocationListener.js';

interface Entry {
  digest: Buffer;
  principal: Principal;
  until: number;
}

/**
 * Keys this API process confirmed against Postgres in the last few seconds (`ttlMs`,
 * API_KEY_CACHE_SECONDS), so that most requests need no authentication query.
 *
 * - A real write may be admitted on any of them, because the worker confirms the key once more
 *   inside the write itself (runWrite): a revoked key writes nothing from the moment its
 *   revocation commits.
 * - A read or dry run, which no worker checks again, is answered on one only while this process
 *   hears revocations (RevocationListener): every revocation is announced when it commits and
 *   the key is forgotten on hearing it, so a revoked key stops reading within the delivery of
 *   that notice, and never later than `ttlMs` after its last confirmation.
 */
export class RecentKeys implements RevocationEvents {
  private readonly entries = new Map<string, Entry>();
  private heard = false;
  /**
   * Counts what may have made a confirmation stale (a revocation, a gap in listening): a
   * confirmation read from Postgres before one of those is not remembered.
   */
  private generation = 0;

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

  /** As find, for a request no worker will check again: only while revocations are heard. */
  findForRead(presented: string, now = Date.now()): Principal | null {
    return this.heard ? this.find(presented, now) : null;
  }

  /** Marks the moment before asking Postgres; pass it to remember. */
  mark(): number {
    return this.generation;
  }

  /**
   * Records a key Postgres just confirmed, unless something that may have revoked it happened
   * since `mark` (the confirmation may predate the revocation).
   */
  remember(
    presented: string,
    principal: Principal,
    mark = this.generation,
    now = Date.now(),
  ): void {
    if (mark !== this.generation) return;
    const id = principal.apiKeyId;
    this.entries.delete(id);
    if (this.entries.size >= this.capacity) {
      // The oldest confirmation goes first (a Map iterates in insertion order).
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(id, { digest: digestOf(presented), principal, until: now + this.ttlMs });
  }

  /** Drops a key that was revoked (announced by Postgres, or found by a worker). */
  forget(apiKeyId: string): void {
    this.generation += 1;
    this.entries.delete(apiKeyId);
  }

  revoked(apiKeyId: string): void {
    this.forget(apiKeyId);
  }

  /**
   * A revocation made while nobody listened was never heard: whatever was confirmed before the
   * gap ends is dropped, when listening stops and again when it resumes.
   */
  listening(heard: boolean): void {
    this.generation += 1;
    this.entries.clear();
    this.heard = heard;
  }
}
