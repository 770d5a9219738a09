import type { NodeSpec } from '../../lib/node-spec';
import { PLATE_GROUP } from '../../lib/ops/plate-input';
import { PLATE_FIELDS } from '../../lib/input/payload';
import { ACTION_WORDS } from '../../lib/status/status';

export const spec: NodeSpec = {
  type: 'ipcam-plate-add',
  settings: { group: PLATE_GROUP },
  payloadItemKeys: PLATE_FIELDS,
  status: ['platesDone', 'platesPartly', ...ACTION_WORDS],
};
