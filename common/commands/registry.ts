import { resources } from '../resources/index.js';
import type { Command } from './command.js';

/** Every write, by the name a queued job carries: the commands of every resource descriptor. */
export const commands: ReadonlyMap<string, Command> = new Map(
  resources
    .flatMap((resource) => Object.values(resource.commands))
    .map((command) => [command.name, command]),
);
