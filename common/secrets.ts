import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * Secrets at rest (trust.md §4): a webhook signing secret, or an answer that carries one, is
 * stored sealed with AES-256-GCM under SECRETS_KEY, as `sealed:v1:<key id>:<base64url of nonce,
 * tag and ciphertext>`. The key id is derived from the key itself, so a value names the key that
 * opens it and no second setting can disagree with the key; SECRETS_KEY_PREVIOUS still opens the
 * values of the key before a rotation until they are sealed again (resealStoredSecrets).
 */

const PREFIX = 'sealed:v1:';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

export interface SecretsKey {
  id: string;
  key: Buffer;
}

export interface Keyring {
  current: SecretsKey;
  /** Keys that still open values but never seal new ones. */
  previous: readonly SecretsKey[];
  /** True when no SECRETS_KEY was given and a development key was derived. */
  derived: boolean;
}

export class SecretsError extends Error {}

/** A key from its 64 hex characters; its id is the start of its SHA-256, never the key. */
export function secretsKeyOf(hex: string): SecretsKey {
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) throw new SecretsError('must be 64 hex characters');
  const key = Buffer.from(hex, 'hex');
  return { id: createHash('sha256').update(key).digest('hex').slice(0, 8), key };
}

/**
 * The key of a development machine: derived from the cursor secret, so that the API and its
 * workers, which share it, agree without another setting. Never used in production (config.ts
 * refuses to start there without SECRETS_KEY).
 */
export function developmentKey(cursorSecret: string): SecretsKey {
  const hex = createHash('sha256')
    .update(`dgm development secrets key:${cursorSecret}`)
    .digest('hex');
  return secretsKeyOf(hex);
}

export function keyringOf(settings: {
  SECRETS_KEY?: string | undefined;
  SECRETS_KEY_PREVIOUS?: string | undefined;
  CURSOR_SECRET: string;
}): Keyring {
  const previous = settings.SECRETS_KEY_PREVIOUS
    ? [secretsKeyOf(settings.SECRETS_KEY_PREVIOUS)]
    : [];
  if (settings.SECRETS_KEY)
    return { current: secretsKeyOf(settings.SECRETS_KEY), previous, derived: false };
  return { current: developmentKey(settings.CURSOR_SECRET), previous, derived: true };
}

let active: Keyring | null = null;

/** Sets the keys of this process (the API and the worker do at start, from their config). */
export function useKeyring(keyring: Keyring): void {
  active = keyring;
}

/** The keys of this process; before useKeyring, a development key from the environment. */
export function activeKeyring(): Keyring {
  active ??= keyringOf({ CURSOR_SECRET: process.env.CURSOR_SECRET ?? '' });
  return active;
}

export const isSealed = (value: string): boolean => value.startsWith(PREFIX);

/** The key id a sealed value names; null for a value in clear. */
export const keyIdOf = (value: string): string | null =>
  isSealed(value) ? (value.slice(PREFIX.length).split(':', 1)[0] ?? null) : null;

export function seal(clear: string, keyring: Keyring = activeKeyring()): string {
  const { id, key } = keyring.current;
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  // The key id is authenticated too: a value moved under another id fails rather than opens.
  cipher.setAAD(Buffer.from(id));
  const body = Buffer.concat([cipher.update(clear, 'utf8'), cipher.final()]);
  const sealed = Buffer.concat([nonce, cipher.getAuthTag(), body]).toString('base64url');
  return `${PREFIX}${id}:${sealed}`;
}

/**
 * The clear text of a sealed value. A value that is not sealed is one stored before sealing
 * began, and is answered as it is (resealStoredSecrets seals those). Throws SecretsError for a
 * value under a key this process does not have, or one that was altered.
 */
export function unseal(value: string, keyring: Keyring = activeKeyring()): string {
  if (!isSealed(value)) return value;
  const [id, data] = value.slice(PREFIX.length).split(':');
  const found = [keyring.current, ...keyring.previous].find((key) => key.id === id);
  if (!found || data === undefined)
    throw new SecretsError(
      `a stored secret is sealed under key ${id ?? '?'}, which neither SECRETS_KEY nor SECRETS_KEY_PREVIOUS is`,
    );
  const raw = Buffer.from(data, 'base64url');
  if (raw.length < NONCE_BYTES + TAG_BYTES) throw new SecretsError('a stored secret is damaged');
  try {
    const decipher = createDecipheriv('aes-256-gcm', found.key, raw.subarray(0, NONCE_BYTES));
    decipher.setAAD(Buffer.from(found.id));
    decipher.setAuthTag(raw.subarray(NONCE_BYTES, NONCE_BYTES + TAG_BYTES));
    return Buffer.concat([
      decipher.update(raw.subarray(NONCE_BYTES + TAG_BYTES)),
      decipher.final(),
    ]).toString('utf8');
  } catch {
    throw new SecretsError('a stored secret is damaged: it fails its authentication');
  }
}

/** Whether a stored value should be sealed again: in clear, or under another key than the current one. */
export const needsResealing = (value: string, keyring: Keyring = activeKeyring()): boolean =>
  keyIdOf(value) !== keyring.current.id;
