import { REQUEST_OPERATIONS } from '../../lib/ops';
import { OVERRIDES } from '../../lib/input/payload';
import { ACTION_WORDS } from '../../lib/status/status';
import { operationSpec } from '../operation-node';

// A node saved without an operation runs getDeviceInfo, as a new node in the editor starts: a
// message never chooses for it. A flow that stored `msg` keeps it (read operations only).
export const spec = operationSpec(
  { type: 'ipcam-request', settings: { overrides: OVERRIDES }, status: ['operationDone', 'progress', ...ACTION_WORDS] },
  REQUEST_OPERATIONS,
  { msgChooses: 'whenSettingIsMsg', defaultOperation: 'getDeviceInfo' },
);
