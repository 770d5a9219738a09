import { REQUEST_OPERATIONS } from '../../lib/ops';
import { registerOperationNode } from '../operation-node';
import { spec } from './spec';
import type { NodeAPI } from '../red';

export = function register(RED: NodeAPI): void {
  // A node saved without an operation runs getDeviceInfo, as a new node in the editor starts: a
  // message never chooses for it. A flow that stored `msg` keeps it (read operations only).
  registerOperationNode(RED, spec, REQUEST_OPERATIONS, { msgChooses: 'whenSettingIsMsg', defaultOperation: 'getDeviceInfo' });
};
