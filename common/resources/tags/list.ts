import { sql } from 'slonik';
import { textSearch } from '../../pagination/listSpec.js';
import { collectionList } from '../table.js';
import { presentTag } from './present.js';
import { tagIdentity, tagTable } from './schema.js';

export const tagList = collectionList(tagIdentity, tagTable, {
  present: presentTag,
  filters: { q: textSearch([sql.fragment`name`]) },
});
