import { EDGE_RECORD_OPERATIONS, type Operation, type OpResult } from '../../lib/ops';
import { OVERRIDES } from '../../lib/input/payload';
import { ACTION_WORDS } from '../../lib/status/status';
import { operationSpec } from '../operation-node';

function statusOf(op: Operation, result: OpResult): string {
  const { payload } = result;
  const count = Array.isArray(payload) ? payload.length : 0;
  switch (op.name) {
    case 'search':
      return `${count} of ${result.total ?? count}`;
    case 'eventNames':
      return `${count} names`;
    case 'listStorage':
      return `${count} entries`;
    default:
      return Buffer.isBuffer(payload) ? `${payload.length} bytes` : 'done';
  }
}

// msg.payload.operation may choose another of these operations: none of them changes the device.
export const spec = operationSpec(
  { type: 'ipcam-edgerecord', settings: { overrides: OVERRIDES }, status: ['operationDone', ...ACTION_WORDS] },
  EDGE_RECORD_OPERATIONS,
  { msgChooses: 'always', defaultOperation: 'search', statusText: statusOf },
);
