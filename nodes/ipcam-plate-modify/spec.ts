import type { NodeSpec } from '../../lib/node-spec';
import { PLATE_GROUP } from '../../lib/ops/plate-input';
import { PLATE_FIELDS } from '../../lib/input/payload';
import { ACTION_WORDS } from '../../lib/status/status';

export const spec: NodeSpec = {
  type: 'ipcam-plate-modify',
  settings: { group: PLATE_GROUP },
  payloadKeys: PLATE_FIELDS,
  status: ['plateModified', ...ACTION_WORDS],
};
