import type { EventType } from '../events/eventType.js';

const collection = '/api/v1/api-keys';
const record = `${collection}/{id}`;

const of = (
  happened: string,
  command: string,
  method: 'POST' | 'DELETE',
  path: string,
): EventType => ({
  type: `api_key.${happened}`,
  objectType: 'api_key',
  command,
  request: { method, path, label: 'API key (never its secret)' },
});

/** The key actions (trust.md §2), each its event; a roll's event carries the new key. */
export const apiKeyEventTypes: readonly EventType[] = [
  of('created', 'api_keys.create', 'POST', collection),
  of('rolled', 'api_keys.roll', 'POST', `${record}/roll`),
  of('revoked', 'api_keys.revoke', 'DELETE', record),
];
