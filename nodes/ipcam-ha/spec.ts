import { HA_SETTINGS } from '../../lib/ha/settings';
import type { NodeSpec } from '../../lib/input/node-spec';

export const spec: NodeSpec = { type: 'ipcam-ha', settings: HA_SETTINGS };
