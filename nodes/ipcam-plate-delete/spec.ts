import type { NodeSpec } from '../../lib/input/node-spec';
import { PLATE_GROUP } from '../../lib/ops/plate-input';

export const spec: NodeSpec = { type: 'ipcam-plate-delete', settings: { group: PLATE_GROUP }, payloadItemKeys: ['plate', 'group'] };
