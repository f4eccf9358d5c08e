import type { ResourceDescriptor } from '../descriptor.js';
import { retrieveFrom } from '../table.js';
import { createTag, deleteTagCommand, updateTagCommand } from './commands.js';
import { tagList } from './list.js';
import { presentTag } from './present.js';
import { tagResponse } from './response.js';
import { tagDefaults, tagIdentity, tagShape, tagTable } from './schema.js';

export const tags: ResourceDescriptor = {
  ...tagIdentity,
  permission: 'tags',
  shape: tagShape,
  defaults: tagDefaults,
  response: tagResponse,
  commands: { create: createTag, update: updateTagCommand, delete: deleteTagCommand },
  list: tagList,
  retrieve: retrieveFrom(tagTable, presentTag),
  text: {
    tag: 'Tags',
    component: 'Tag',
    notes: {
      name: 'Unique per institution, compared case-insensitively (422 `already_in_use`).',
      color: 'Written `#RRGGBB` in either letter case; answered in capitals.',
    },
    rules: [
      'Labels for donors: a donor lists its tags in `tag_ids`, and `GET /donors?tag_id=` finds the donors with a tag. `name` is unique per institution, case-insensitively.',
      'Deleting a tag takes it off every donor that carries it (their `updated_at` changes); the donors stay.',
    ].join('\n\n'),
    deleteNote: 'Takes the tag off every donor that carries it; the donors stay.',
    filterNotes: { q: 'The name contains this text.' },
    examples: {
      create: { name: 'Reunion 2026', color: '#1F6FEB' },
      update: { color: '#D29922' },
    },
  },
};
