import type { NodeSpec } from '../../lib/node-spec';
import { PLATE_GROUP } from '../../lib/ops/plate-input';
import { OVERRIDES } from '../../lib/input/payload';
import { ACTION_WORDS } from '../../lib/status/status';

export const spec: NodeSpec = {
  type: 'ipcam-plate-query',
  settings: { group: PLATE_GROUP, overrides: OVERRIDES },
  payloadKeys: ['group', 'offset', 'limit'],
  status: ['platesFound', ...ACTION_WORDS],
};
