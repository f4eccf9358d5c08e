import type { CommonQueryMethods } from 'slonik';
import type { JsonObject } from '../json.js';
import { presentAwardCycle } from './awardCycles/present.js';
import { findAwardCycle } from './awardCycles/queries.js';
import { presentAward } from './awards/present.js';
import { findAward } from './awards/queries.js';
import { presentDonor } from './donors/present.js';
import { findDonor, findGiving } from './donors/queries.js';
import { presentFund } from './funds/present.js';
import { findFund, findFundTotals } from './funds/queries.js';
import { presentGift } from './gifts/present.js';
import { findGift } from './gifts/queries.js';
import { presentScholarship } from './scholarships/present.js';
import { findScholarship } from './scholarships/queries.js';
import { presentStudent } from './students/present.js';
import { findStudent } from './students/queries.js';
import { presentUser } from './users/present.js';
import { findUser } from './users/queries.js';

/** Reads one record of the caller's institution, presented; null when it is not theirs or not there. */
export type Retrieval = (
  db: CommonQueryMethods,
  institutionId: number,
  id: number,
) => Promise<JsonObject | null>;

export const retrieveDonor: Retrieval = async (db, institutionId, id) => {
  const row = await findDonor(db, institutionId, id);
  return row && presentDonor(row, await findGiving(db, institutionId, id));
};

export const retrieveGift: Retrieval = async (db, institutionId, id) => {
  const row = await findGift(db, institutionId, id);
  return row && presentGift(row);
};

export const retrieveFund: Retrieval = async (db, institutionId, id) => {
  const row = await findFund(db, institutionId, id);
  return row && presentFund(row, await findFundTotals(db, institutionId, id));
};

export const retrieveUser: Retrieval = async (db, institutionId, id) => {
  const row = await findUser(db, institutionId, id);
  return row && presentUser(row);
};

export const retrieveAwardCycle: Retrieval = async (db, institutionId, id) => {
  const row = await findAwardCycle(db, institutionId, id);
  return row && presentAwardCycle(row);
};

export const retrieveStudent: Retrieval = async (db, institutionId, id) => {
  const row = await findStudent(db, institutionId, id);
  return row && presentStudent(row);
};

export const retrieveScholarship: Retrieval = async (db, institutionId, id) => {
  const row = await findScholarship(db, institutionId, id);
  return row && presentScholarship(row);
};

export const retrieveAward: Retrieval = async (db, institutionId, id) => {
  const row = await findAward(db, institutionId, id);
  return row && presentAward(row);
};
