import type { NodeSpec } from '../../lib/node-spec';
import { OVERRIDES } from '../../lib/payload';

export const spec: NodeSpec = { type: 'ipcam-request', settings: { overrides: OVERRIDES } };
