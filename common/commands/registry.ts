import { createAwardCycle, updateAwardCycleCommand } from '../resources/awardCycles/commands.js';
import { createAward, updateAwardCommand } from '../resources/awards/commands.js';
import {
  createDonor,
  deleteDonorCommand,
  updateDonorCommand,
} from '../resources/donors/commands.js';
import { createFund, updateFundCommand } from '../resources/funds/commands.js';
import { createGift, deleteGiftCommand, updateGiftCommand } from '../resources/gifts/commands.js';
import { createScholarship, updateScholarshipCommand } from '../resources/scholarships/commands.js';
import { createStudent, updateStudentCommand } from '../resources/students/commands.js';
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
    createAwardCycle,
    updateAwardCycleCommand,
    createStudent,
    updateStudentCommand,
    createScholarship,
    updateScholarshipCommand,
    createAward,
    updateAwardCommand,
  ].map((command) => [command.name, command]),
);
