import { apiKeyEventTypes } from '../apiKeys/events.js';
import { importEventTypes } from '../imports/events.js';
import { givingStatementRunEventTypes } from '../resources/givingStatementRuns/index.js';
import { institutionEventTypes } from '../institutionUpdate.js';
import type { ResourceDescriptor } from '../resources/descriptor.js';
import { resources } from '../resources/index.js';
import type { EventType } from './eventType.js';

export type { EventType } from './eventType.js';

/**
 * Every event a resource emits, named `<object>.<past tense of the command's action>`: its
 * create, update and delete, each of its actions, each of its children's creates and each of
 * its nested actions (a webhook delivery's retry is `webhook_delivery.retried`).
 */
function typesOf(resource: ResourceDescriptor): EventType[] {
  const { object, label, commands } = resource;
  const collection = `/api/v1${resource.path}`;
  const record = `${collection}/{id}`;
  const of = (
    happened: string,
    command: string,
    method: EventType['request']['method'],
    path: string,
    objectType = object,
    objectLabel = label,
  ): EventType => ({
    type: `${objectType}.${happened}`,
    objectType,
    command,
    request: { method, path, label: objectLabel },
  });
  return [
    ...(commands.create
      ? [of(resource.createdAs ?? 'created', commands.create.name, 'POST', collection)]
      : []),
    ...(commands.update ? [of('updated', commands.update.name, 'PATCH', record)] : []),
    ...(commands.update && resource.updatedAs
      ? [
          {
            ...of(resource.updatedAs.happened, commands.update.name, 'PATCH', record),
            changes: resource.updatedAs.field,
          },
        ]
      : []),
    ...(commands.delete ? [of('deleted', commands.delete.name, 'DELETE', record)] : []),
    ...(resource.actions ?? []).map((action) =>
      of(action.happened, action.command.name, 'POST', `${record}/${action.name}`),
    ),
    ...(resource.children ?? []).map((child) =>
      child.parentHappened
        ? of(child.parentHappened, child.create.name, 'POST', `${record}/${child.name}`)
        : of(
            'created',
            child.create.name,
            'POST',
            `${record}/${child.name}`,
            child.object,
            child.label,
          ),
    ),
    ...(resource.nestedActions ?? []).map((action) =>
      of(
        action.happened,
        action.command.name,
        'POST',
        `${record}/${action.under}/{${action.param}}/${action.name}`,
        action.object,
        action.label,
      ),
    ),
    ...(resource.consequences ?? []).map((consequence) => ({
      ...of(consequence.happened, '', consequence.by.method, consequence.by.path),
      consequence: true as const,
    })),
  ];
}

/**
 * Every event type: the institution's, those of the resources in their order
 * (common/resources/index.ts), then imports', then the API keys'.
 */
export const eventTypes: readonly EventType[] = [
  ...institutionEventTypes,
  ...resources.flatMap(typesOf),
  ...importEventTypes,
  ...apiKeyEventTypes,
  ...givingStatementRunEventTypes,
];

const byCommand = new Map<string, EventType[]>();
for (const eventType of eventTypes)
  if (!eventType.consequence)
    byCommand.set(eventType.command, [...(byCommand.get(eventType.command) ?? []), eventType]);

/**
 * The event a committed write of this command emits: an update that changes the field a type
 * names (`award_cycle.status_changed`) is that type, any other the command's own.
 */
export function eventTypeOf(command: string, previousAttributes?: object | null): EventType {
  const candidates = byCommand.get(command) ?? [];
  const eventType =
    candidates.find(
      ({ changes }) => changes && previousAttributes && changes in previousAttributes,
    ) ?? candidates.find(({ changes }) => !changes);
  // eventTypes walks the descriptors as the command registry does: a miss is a bug.
  if (!eventType) throw new Error(`no event type for the command ${command}`);
  return eventType;
}

/** The type of a consequence event its resource declares (`pledge`, `fulfilled`). */
export function consequenceTypeOf(objectType: string, happened: string): EventType {
  const type = `${objectType}.${happened}`;
  const eventType = eventTypes.find(
    (candidate) => candidate.consequence && candidate.type === type,
  );
  if (!eventType) throw new Error(`no consequence event type ${type}`);
  return eventType;
}
