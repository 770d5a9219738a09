import type { IpcamError } from '../lib/errors';
import { cleared, failed } from '../lib/status';
import { reportFailure } from './action';
import type { Node } from './red';

/**
 * A node whose settings were refused on deploy (DESIGN: settings are checked on deploy): the red
 * status stays, and each message gets that same EINPUT, with nothing sent. For the nodes that do
 * not take their inputs through handleInput (which refuses the same way for the action nodes).
 */
export function refuseEveryInput(node: Node, refused: IpcamError): void {
  node.status(failed(refused));
  node.on('input', (msg, _send, done) => reportFailure(node, msg, refused, done));
  node.on('close', (_removed, done) => {
    node.status(cleared());
    done();
  });
}
