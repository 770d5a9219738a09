import type { NodeSpec } from '../../lib/node-spec';
import { OVERRIDES } from '../../lib/input/payload';
import { ACTION_WORDS } from '../../lib/status/status';

export const spec: NodeSpec = {
  type: 'ipcam-edgerecord',
  settings: { overrides: OVERRIDES },
  status: ['operationDone', ...ACTION_WORDS],
};
