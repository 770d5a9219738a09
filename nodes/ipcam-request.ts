import { REQUEST_OPERATIONS } from '../lib/ops';
import { registerOperationNode } from './operation-node';
import type { NodeAPI } from './red';

export = function register(RED: NodeAPI): void {
  registerOperationNode(RED, 'ipcam-request', REQUEST_OPERATIONS, { msgChooses: 'whenSettingIsMsg', defaultOperation: 'msg' });
};
