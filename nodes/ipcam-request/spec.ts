import type { NodeSpec } from '../../lib/input/node-spec';
import { OVERRIDES } from '../../lib/input/payload';

export const spec: NodeSpec = { type: 'ipcam-request', settings: { overrides: OVERRIDES } };
