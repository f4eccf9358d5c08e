import { deleted, type Command } from '../../commands/command.js';
import {
  createCommand,
  findTarget,
  updateCommand,
  type WritableResource,
} from '../../commands/resourceCommands.js';
import { alreadyInUse, checkUnique } from '../checks.js';
import { readOnlyOf } from '../responseFields.js';
import { presentTag } from './present.js';
import { deleteTag } from './queries.js';
import { tagResponse } from './response.js';
import {
  tagDefaults,
  tagIdentity,
  tagShape,
  tagTable,
  type TagFields,
  type TagRow,
} from './schema.js';

const tagsResource: WritableResource<TagRow, TagFields> = {
  identity: tagIdentity,
  table: tagTable,
  shape: tagShape,
  defaults: tagDefaults,
  readOnly: readOnlyOf(tagResponse, tagShape),
  constraints: { tags_institution_name_key: alreadyInUse('name', 'tag') },
  rules: (ctx, check) =>
    checkUnique(ctx, check, { table: 'tags', column: 'name', ignoreCase: true, what: 'tag' }),
  present: presentTag,
};

export const createTag = createCommand(tagsResource);
export const updateTagCommand = updateCommand(tagsResource);

/** A tag goes from every donor with it; the donors themselves stay. */
export const deleteTagCommand: Command = {
  name: `${tagIdentity.name}.delete`,
  async execute(ctx, request) {
    // The tag is locked (FOR UPDATE) before any donor is stripped of it: a donor write that
    // checked the tag holds it FOR KEY SHARE, so it commits first and the strip then sees its
    // donor; one that checks it later finds it gone. A donor keeping the tag it has is guarded by
    // its own row, which the strip must lock too.
    const existing = await findTarget(ctx, request, tagsResource);
    if (!ctx.dryRun) await deleteTag(ctx.db, ctx.institution.id, existing.id);
    return deleted(tagIdentity.object, existing.id);
  },
};
