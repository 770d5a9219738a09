import { defineAction } from '../../lib/node-spec';
import { PLATE_GROUP } from '../../lib/ops/plate-input';
import { deletePlates } from '../../lib/ops/plates';
import { ACTION_WORDS } from '../../lib/status/status';
import { batchOutput } from '../plate-results';

export const spec = defineAction({
  type: 'ipcam-plate-delete',
  settings: { group: PLATE_GROUP },
  payloadItemKeys: ['plate', 'group'],
  status: ['platesDone', 'platesPartly', ...ACTION_WORDS],
  input: (payload, s) => ({ plates: payload, group: s.group || undefined }),
  run: (client, { plates, group }, { signal }) => deletePlates(client, plates, { group, signal }),
  output: (results) => batchOutput('deleted', results),
});
