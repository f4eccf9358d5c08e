import type { EventType } from '../events/eventType.js';

const collection = '/api/v1/imports';
const record = `${collection}/{id}`;

const of = (happened: string, command: string, path: string): EventType => ({
  type: `import.${happened}`,
  objectType: 'import',
  command,
  request: { method: 'POST', path, label: 'import' },
});

/**
 * The events of imports (integration.md §3): its three writes, and `import.completed`, which the
 * workers emit when the last chunk of an import is written (its `command` names no write: no job
 * of the write queue carries it). The records an import writes emit their own events
 * (`donor.created`, `gift.created`, `donor.updated`).
 */
export const importEventTypes: readonly EventType[] = [
  of('created', 'imports.create', collection),
  of('committed', 'imports.commit', `${record}/commit`),
  of('cancelled', 'imports.cancel', `${record}/cancel`),
  of('completed', 'imports.complete', collection),
];
