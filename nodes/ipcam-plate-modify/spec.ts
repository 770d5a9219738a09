import type { NodeSpec } from '../../lib/input/node-spec';
import { PLATE_GROUP } from '../../lib/ops/plate-input';
import { PLATE_FIELDS } from '../../lib/input/payload';

export const spec: NodeSpec = { type: 'ipcam-plate-modify', settings: { group: PLATE_GROUP }, payloadKeys: PLATE_FIELDS };
