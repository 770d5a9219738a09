import type { NodeSpec } from '../../lib/node-spec';
import { PLATE_GROUP } from '../../lib/ops/plate-input';
import { PLATE_FIELDS } from '../../lib/payload';

export const spec: NodeSpec = { type: 'ipcam-plate-add', settings: { group: PLATE_GROUP }, payloadItemKeys: PLATE_FIELDS };
