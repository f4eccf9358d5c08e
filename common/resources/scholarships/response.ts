import { z } from 'zod';
import { moneyAmount, recordIdOf, reference, timestamps } from '../responseFields.js';
import { scholarshipStatuses } from './schema.js';

export const scholarshipResponse = z.object({
  id: recordIdOf('scholarship'),
  object: z.literal('scholarship'),
  name: z.string(),
  fund_id: reference('fund the scholarship’s awards draw from'),
  description: z.string().nullable(),
  status: z.enum(scholarshipStatuses),
  ...timestamps,
});
export type ScholarshipResponse = z.infer<typeof scholarshipResponse>;

const fundSummary = z.object({
  id: reference('fund'),
  code: z.string(),
  name: z.string(),
});

/** One row of GET /scholarships/awarded-students (reports.ts). */
export const awardedStudentResponse = z.object({
  object: z.literal('awarded_student'),
  award_id: reference('award'),
  award_cycle_id: reference('award cycle'),
  amount: moneyAmount,
  status: z
    .enum(['accepted', 'disbursed'])
    .describe('Only accepted and disbursed awards are reported.'),
  student: z.object({
    id: reference('student'),
    student_number: z.string(),
    first_name: z.string(),
    last_name: z.string(),
    email: z.string().nullable(),
  }),
  scholarship: z.object({ id: reference('scholarship'), name: z.string() }),
  fund: fundSummary,
});

/** One row of GET /scholarships/fund-summaries (reports.ts). */
export const fundSummaryResponse = z.object({
  object: z.literal('fund_summary'),
  fund: fundSummary,
  award_cycle_id: reference('award cycle'),
  awards_count: z.number().int().positive(),
  students_count: z.number().int().positive(),
  amount_awarded: moneyAmount.describe('The sum of the accepted and disbursed awards.'),
});
