import { defineAction } from '../../lib/node-spec';
import { PLATE_GROUP } from '../../lib/ops/plate-input';
import { queryPlates, type PlateQuery } from '../../lib/ops/plates';
import { OVERRIDES, payloadFields } from '../../lib/input/payload';
import { platesFound, ACTION_WORDS } from '../../lib/status/status';

export const spec = defineAction({
  type: 'ipcam-plate-query',
  settings: { group: PLATE_GROUP, overrides: OVERRIDES },
  payloadKeys: ['group', 'offset', 'limit'],
  status: ['platesFound', ...ACTION_WORDS],
  // Each field is checked by queryPlates (its keys already were, by payloadKeys).
  input: (payload, s): PlateQuery => ({ group: s.group || undefined, ...payloadFields(payload) }),
  run: (client, query, { signal }) => queryPlates(client, query, { signal }),
  output: ({ plates, total }) => ({ payload: plates, fields: { total }, status: platesFound(plates.length, total) }),
});
