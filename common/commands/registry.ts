import { resources } from '../resources/index.js';
import type { Command } from './command.js';

/**
 * Every write, by the name a queued job carries: the commands of every resource descriptor, its
 * actions' and its child collections' creates.
 */
export const commands: ReadonlyMap<string, Command> = new Map(
  resources
    .flatMap((resource) => [
      ...Object.values(resource.commands),
      ...(resource.actions ?? []).map((action) => action.command),
      ...(resource.children ?? []).map((child) => child.create),
    ])
    .map((command) => [command.name, command]),
);
