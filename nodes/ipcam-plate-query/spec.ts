import type { NodeSpec } from '../../lib/input/node-spec';
import { PLATE_GROUP } from '../../lib/ops/plate-input';
import { OVERRIDES } from '../../lib/input/payload';

export const spec: NodeSpec = { type: 'ipcam-plate-query', settings: { group: PLATE_GROUP, overrides: OVERRIDES }, payloadKeys: ['group', 'offset', 'limit'] };
