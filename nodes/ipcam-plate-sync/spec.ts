import type { NodeSpec } from '../../lib/node-spec';
import { PLATE_GROUP } from '../../lib/ops/plate-input';
import { PLATE_FIELDS } from '../../lib/input/payload';
import { ACTION_WORDS } from '../../lib/status/status';

export const spec: NodeSpec = {
  type: 'ipcam-plate-sync',
  settings: { group: PLATE_GROUP },
  // A plate-query's records are a desired list as they come (type and card are not synced).
  payloadItemKeys: [...PLATE_FIELDS, 'type', 'card'],
  status: ['synced', 'syncPlanned', 'syncPartly', ...ACTION_WORDS],
};
