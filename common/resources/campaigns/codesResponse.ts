import { reference } from '../responseFields.js';

/** A record's codes (a gift's, a pledge's, a recurring gift's) as answered. */
export const recordCodesResponse = {
  campaign_id: reference('campaign')
    .nullable()
    .describe('The campaign the record is coded to (the default of its lines); null for none.'),
  appeal_id: reference('appeal')
    .nullable()
    .describe('The appeal the record is coded to (the default of its lines); null for none.'),
};

/** A designation's own codes as answered: null where it takes the record's. */
export const designationCodesResponse = {
  campaign_id: reference('campaign')
    .nullable()
    .describe('The designation’s own campaign, which wins over the record’s; null: the record’s.'),
  appeal_id: reference('appeal')
    .nullable()
    .describe('The designation’s own appeal, which wins over the record’s; null: the record’s.'),
};
