import { apiKeyCommands } from '../apiKeys/commands.js';
import { importCommands } from '../imports/commands.js';
import { updateInstitutionCommand } from '../institutionUpdate.js';
import { resources } from '../resources/index.js';
import type { Command } from './command.js';

/**
 * Every write, by the name a queued job carries: the commands of every resource descriptor, its
 * actions', its child collections' creates and its nested actions; the institution's settings
 * (common/institutionUpdate.ts: one record, not a collection); and the imports' (common/imports:
 * an upload is not a descriptor's JSON body); and the API keys' (common/apiKeys: text ids).
 */
export const commands: ReadonlyMap<string, Command> = new Map(
  resources
    .flatMap((resource) => [
      ...Object.values(resource.commands),
      ...(resource.actions ?? []).map((action) => action.command),
      ...(resource.children ?? []).map((child) => child.create),
      ...(resource.nestedActions ?? []).map((action) => action.command),
    ])
    .concat(updateInstitutionCommand, importCommands, apiKeyCommands)
    .map((command) => [command.name, command]),
);
