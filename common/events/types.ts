import { importEventTypes } from '../imports/events.js';
import type { ResourceDescriptor } from '../resources/descriptor.js';
import { resources } from '../resources/index.js';

/** One kind of event: the write that emits it. */
export interface EventType {
  /** `<object>.<what happened>`, e.g. `gift.voided`. */
  type: string;
  /** The `object` of the record in `data.object`: the type's first part. */
  objectType: string;
  /** The command whose committed write emits it, e.g. `gifts.void`. */
  command: string;
  /** The request that makes the write, for the OpenAPI document. */
  request: { method: 'POST' | 'PATCH' | 'DELETE'; path: string; label: string };
}

/**
 * Every event a resource emits, named `<object>.<past tense of the command's action>`: its
 * create, update and delete, each of its actions, and each of its children's creates.
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
    of(resource.createdAs ?? 'created', commands.create.name, 'POST', collection),
    ...(commands.update ? [of('updated', commands.update.name, 'PATCH', record)] : []),
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
  ];
}

/** Every event type, in the order of the resources (common/resources/index.ts), then imports'. */
export const eventTypes: readonly EventType[] = [
  ...resources.flatMap(typesOf),
  ...importEventTypes,
];

const byCommand = new Map(eventTypes.map((eventType) => [eventType.command, eventType]));

/** The event a committed write of this command emits. */
export function eventTypeOf(command: string): EventType {
  const eventType = byCommand.get(command);
  // eventTypes walks the descriptors as the command registry does: a miss is a bug.
  if (!eventType) throw new Error(`no event type for the command ${command}`);
  return eventType;
}
