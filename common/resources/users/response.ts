import { z } from 'zod';
import { recordIdOf, timestamps } from '../responseFields.js';
import { userRoles, userStatuses } from './schema.js';

export const userResponse = z.object({
  id: recordIdOf('user'),
  object: z.literal('user'),
  email: z.string(),
  first_name: z.string(),
  last_name: z.string(),
  role: z.enum(userRoles),
  status: z.enum(userStatuses),
  ...timestamps,
});
export type UserResponse = z.infer<typeof userResponse>;
