import type { NodeSpec } from '../../lib/node-spec';
import { PLATE_GROUP } from '../../lib/ops/plate-input';
import { ACTION_WORDS } from '../../lib/status/status';

export const spec: NodeSpec = {
  type: 'ipcam-plate-delete',
  settings: { group: PLATE_GROUP },
  payloadItemKeys: ['plate', 'group'],
  status: ['platesDone', 'platesPartly', ...ACTION_WORDS],
};
