import type { RequiredPermission } from '../auth/permissions.js';
import type { Command } from '../commands/command.js';
import type { ListSpec } from '../pagination/listSpec.js';
import type {
  ActionDescriptor,
  ChildCollectionDescriptor,
  InstitutionReadDescriptor,
  NestedActionDescriptor,
  RecordDownloadDescriptor,
  RecordListDescriptor,
  RecordReadDescriptor,
  ReportDescriptor,
  ResourceDescriptor,
} from '../resources/descriptor.js';

/** What the OpenAPI document needs to know of a list: its endpoint and its filters. */
export type ListDoc = Pick<ListSpec<never>, 'endpoint' | 'filters' | 'required'>;

/**
 * What an entry of the route table (api/routes.ts) is, for its documentation: the resource it
 * belongs to and the command, list or retrieval it serves. The document derives parameters,
 * bodies and responses from these.
 */
export type EndpointDoc =
  | {
      kind: 'write';
      action: 'create' | 'update' | 'delete';
      command: Command;
      resource: ResourceDescriptor;
    }
  | { kind: 'list'; list: ListDoc; resource: ResourceDescriptor; report?: ReportDescriptor }
  | { kind: 'retrieve'; resource: ResourceDescriptor }
  | { kind: 'action'; action: ActionDescriptor; resource: ResourceDescriptor }
  | { kind: 'child-list'; child: ChildCollectionDescriptor; resource: ResourceDescriptor }
  | { kind: 'child-create'; child: ChildCollectionDescriptor; resource: ResourceDescriptor }
  | { kind: 'child-retrieve'; child: ChildCollectionDescriptor; resource: ResourceDescriptor }
  | { kind: 'listed-under'; listed: RecordListDescriptor; resource: ResourceDescriptor }
  | { kind: 'record-read'; read: RecordReadDescriptor; resource: ResourceDescriptor }
  | { kind: 'record-download'; download: RecordDownloadDescriptor; resource: ResourceDescriptor }
  | { kind: 'institution-read'; read: InstitutionReadDescriptor }
  | { kind: 'institution' }
  | { kind: 'institution-update' }
  | { kind: 'event-list'; list: ListDoc }
  | { kind: 'event-retrieve' }
  | { kind: 'webhook-delivery-list'; list: ListDoc }
  | { kind: 'webhook-attempt-list'; list: ListDoc }
  | { kind: 'nested-action'; action: NestedActionDescriptor; resource: ResourceDescriptor }
  | { kind: 'audit-event-list' }
  /** API keys (common/openapi/apiKeys.ts): their ids are text, which no descriptor has. */
  | { kind: 'api-key'; operation: 'list' | 'create' | 'retrieve' | 'revoke' | 'roll' }
  /** Imports (common/openapi/imports.ts): an upload and its file downloads fit no descriptor. */
  | {
      kind: 'import';
      operation:
        | 'create'
        | 'list'
        | 'retrieve'
        | 'commit'
        | 'cancel'
        | 'errors'
        | 'duplicates'
        | 'errors-csv'
        | 'template-donors'
        | 'template-gifts';
    };

export type HttpMethod = 'get' | 'post' | 'patch' | 'delete';

/** One route of the table, as the document generator sees it (no handler). */
export interface DocumentedRoute {
  method: HttpMethod;
  /** Express path under /api/v1, e.g. `/donors/:id`. */
  path: string;
  doc: EndpointDoc;
  /** Shown on the operation as `x-required-permission`. */
  permission: RequiredPermission;
}
