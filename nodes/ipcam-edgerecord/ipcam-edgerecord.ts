import { EDGE_RECORD_OPERATIONS, type Operation, type OpResult } from '../../lib/ops';
import { registerOperationNode } from '../operation-node';
import { spec } from './spec';
import type { NodeAPI } from '../red';

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

export = function register(RED: NodeAPI): void {
  // msg.payload.operation may choose another of these operations: none of them changes the device.
  registerOperationNode(RED, spec, EDGE_RECORD_OPERATIONS, { msgChooses: 'always', defaultOperation: 'search', statusText: statusOf });
};
