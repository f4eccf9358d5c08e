import { z } from 'zod';
import type { ResourceIdentity } from '../../commands/resourceCommands.js';
import { text } from '../../validation/fields.js';
import type { Shape } from '../../validation/validateBody.js';
import type { Reference } from '../checks.js';
import type { Table } from '../table.js';

export const tagIdentity: ResourceIdentity = {
  name: 'tags',
  object: 'tag',
  label: 'tag',
  path: '/tags',
};

/** `#RRGGBB`, in either letter case; stored (and so answered) in capitals. */
const color = z
  .string({ message: 'must be a string' })
  .trim()
  .regex(/^#[0-9A-Fa-f]{6}$/, { message: 'must be a color written #RRGGBB, such as #1F6FEB' })
  .transform((value) => value.toUpperCase());

export const tagShape: Shape = {
  name: { schema: text(100), required: true },
  color: { schema: color, nullable: true },
};

export const tagDefaults = { color: null } as const;

const tagRow = z.object({
  id: z.number(),
  name: z.string(),
  color: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type TagRow = z.infer<typeof tagRow>;
export type TagFields = Omit<TagRow, 'id' | 'created_at' | 'updated_at'>;

export const tagTable: Table<TagRow, TagFields> = { name: 'tags', row: tagRow };

/** How donors refer to tags (`tag_ids`). */
export const tagReference: Reference = { table: 'tags', noun: 'a tag' };
