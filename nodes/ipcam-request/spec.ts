import type { NodeSpec } from '../../lib/node-spec';
import { OVERRIDES } from '../../lib/input/payload';
import { ACTION_WORDS } from '../../lib/status/status';

export const spec: NodeSpec = {
  type: 'ipcam-request',
  settings: { overrides: OVERRIDES },
  status: ['operationDone', 'progress', ...ACTION_WORDS],
};
