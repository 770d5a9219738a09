import { defineAction } from '../../lib/node-spec';
import { PLATE_GROUP } from '../../lib/ops/plate-input';
import { addPlates } from '../../lib/ops/plates';
import { bool } from '../../lib/input/params';
import { PLATE_FIELDS } from '../../lib/input/payload';
import { ACTION_WORDS } from '../../lib/status/status';
import { batchOutput } from '../plate-results';

export const spec = defineAction({
  type: 'ipcam-plate-add',
  settings: { group: PLATE_GROUP, upsert: bool() },
  payloadItemKeys: PLATE_FIELDS,
  status: ['platesDone', 'platesPartly', ...ACTION_WORDS],
  // The plates are checked whole by addPlates before any is sent.
  input: (payload, s) => ({ plates: payload, group: s.group || undefined, upsert: s.upsert === true }),
  run: (client, { plates, ...opts }, { signal }) => addPlates(client, plates, { ...opts, signal }),
  output: (results) => batchOutput('added', results),
});
