import { chooseOperation, EDGE_RECORD_OPERATIONS, runOperation, type Operation, type OpResult } from '../lib/ops';
import { isBlank } from '../lib/params';
import { handleInput, payloadObject } from './action';
import type { AdminRequest, AdminResponse, Node, NodeAPI, NodeDef, NodeMessage, NodeStatus } from './red';

interface EdgeRecordDef extends NodeDef {
  device?: string;
  /** `search`, `eventNames`, `listStorage` or `download`. */
  operation?: string;
  /** That operation's parameters as the editor stored them: defaults for every message. */
  params?: unknown;
}

const DEFAULT_OPERATION = 'search';

/**
 * The settings' parameters that belong to `op`, blanks left out: a field of another operation,
 * left over from before the operation setting changed, must not make every message EINPUT.
 */
function defaultsFor(op: Operation, params: unknown): Record<string, unknown> {
  if (typeof params !== 'object' || params === null || Array.isArray(params)) return {};
  const limits = op.params.limits;
  const fields = limits.type === 'object' ? limits.fields : {};
  return Object.fromEntries(Object.entries(params).filter(([name, value]) => Object.hasOwn(fields, name) && !isBlank(value)));
}

function statusOf(op: Operation, result: OpResult): NodeStatus {
  const { payload } = result;
  const count = Array.isArray(payload) ? payload.length : 0;
  let text: string;
  switch (op.name) {
    case 'search':
      text = `${count} of ${result.total ?? count}`;
      break;
    case 'eventNames':
      text = `${count} names`;
      break;
    case 'listStorage':
      text = `${count} entries`;
      break;
    default:
      text = Buffer.isBuffer(payload) ? `${payload.length} bytes` : 'done';
  }
  return { fill: 'green', shape: 'dot', text: text.slice(0, 19) };
}

export = function register(RED: NodeAPI): void {
  function IpcamEdgeRecordNode(this: Node, def: EdgeRecordDef): void {
    RED.nodes.createNode(this, def);
    const setting = typeof def.operation === 'string' && def.operation !== '' ? def.operation : DEFAULT_OPERATION;
    handleInput(RED, this, def.device, async (msg: NodeMessage, client, signal) => {
      const { operation: fromMsg, ...overrides } = payloadObject(msg) ?? {};
      // msg.payload.operation may choose another of these operations (none of them changes the
      // device); the settings' parameters then do not apply, they belong to the set operation.
      const op = fromMsg === undefined ? chooseOperation(EDGE_RECORD_OPERATIONS, setting, undefined) : chooseOperation(EDGE_RECORD_OPERATIONS, 'msg', fromMsg);
      const input = { ...(op.name === setting ? defaultsFor(op, def.params) : {}), ...overrides };
      const result = await runOperation(client, op, input, { signal });
      msg.payload = result.payload;
      if (result.total !== undefined) msg['total'] = result.total;
      if (result.filename !== undefined) msg['filename'] = result.filename;
      if (result.contentType !== undefined) msg['contentType'] = result.contentType;
      return statusOf(op, result);
    });
  }
  RED.nodes.registerType('ipcam-edgerecord', IpcamEdgeRecordNode as (this: never, def: never) => void);

  // The editor builds its form from the operations' parameters and limits, as lib/ops has them.
  RED.httpAdmin.get('/ipcam-edgerecord/operations', RED.auth.needsPermission('ipcam-edgerecord.read'), (_req: AdminRequest, res: AdminResponse) => {
    res.json([...EDGE_RECORD_OPERATIONS.values()].map((op) => ({ name: op.name, summary: op.summary, params: op.params.limits.type === 'object' ? op.params.limits.fields : {} })));
  });
};
