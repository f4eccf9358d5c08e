import {
  createDonor,
  deleteDonorCommand,
  updateDonorCommand,
} from '../resources/donors/commands.js';
import { createFund, updateFundCommand } from '../resources/funds/commands.js';
import { createGift, deleteGiftCommand, updateGiftCommand } from '../resources/gifts/commands.js';
import { createUser, updateUserCommand } from '../resources/users/commands.js';
import type { Command } from './command.js';

/** Every write, by the name a queued job carries. */
export const commands: ReadonlyMap<string, Command> = new Map(
  [
    createDonor,
    updateDonorCommand,
    deleteDonorCommand,
    createGift,
    updateGiftCommand,
    deleteGiftCommand,
    createFund,
    updateFundCommand,
    createUser,
    updateUserCommand,
  ].map((command) => [command.name, command]),
);
