import { defineAction } from '../../lib/node-spec';
import { inputError } from '../../lib/errors/errors';
import { PLATE_GROUP } from '../../lib/ops/plate-input';
import { modifyPlate } from '../../lib/ops/plates';
import { PLATE_FIELDS, payloadFields } from '../../lib/input/payload';
import { plateModified, ACTION_WORDS } from '../../lib/status/status';

export const spec = defineAction({
  type: 'ipcam-plate-modify',
  settings: { group: PLATE_GROUP },
  payloadKeys: PLATE_FIELDS,
  status: ['plateModified', ...ACTION_WORDS],
  input(payload, s) {
    const change = payloadFields(payload);
    if (!change) throw inputError('msg.payload must be { plate, group?, owner?, phone?, begin?, end? }');
    return { group: s.group || undefined, ...change };
  },
  run: (client, change, { signal }) => modifyPlate(client, change, { signal }),
  output: (modified) => ({ payload: modified, status: plateModified() }),
});
