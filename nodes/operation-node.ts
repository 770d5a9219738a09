import { chooseOperation, runOperation, type Operation, type OpResult } from '../lib/ops';
import { echo } from '../lib/errors/echo';
import { isBlank, isSecretField } from '../lib/input/params';
import { refusedSetting } from '../lib/settings';
import { nearest } from '../lib/input/suggest';
import { payloadFields } from '../lib/input/payload';
import { handleInput } from './action';
import { operationDone, progress, type Status } from '../lib/status/status';
import type { NodeSpec } from '../lib/node-spec';
import type { Node, NodeAPI, NodeDef, NodeMessage } from './red';

interface OperationDef extends NodeDef {
  device?: string;
  /** The operation's name, or `msg` (request only): the message names it. */
  operation?: string;
  /** Defaults of the operation's parameters, as the editor stores them. */
  params?: Record<string, unknown> | string;
  overrides?: string;
}

/** What the dialog stored: an object, or its JSON (older or hand-edited flows). */
function storedParams(value: OperationDef['params']): Record<string, unknown> {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value;
  if (typeof value !== 'string' || value.trim() === '') return {};
  try {
    const parsed: unknown = JSON.parse(value);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/**
 * The stored parameters that belong to `op`, blanks left out: a field of another operation, left
 * over from before the operation setting changed, must not make every message EINPUT. A secret
 * (a password parameter) is never taken from the settings, which are kept in the flow file in
 * clear: it comes from msg.payload only.
 */
function defaultsFor(op: Operation, stored: Record<string, unknown>): Record<string, unknown> {
  const limits = op.params.limits;
  const fields = limits.type === 'object' ? limits.fields : {};
  return Object.fromEntries(
    Object.entries(stored).filter(([name, value]) => {
      const field = fields[name];
      return field !== undefined && !isSecretField(field) && !isBlank(value);
    }),
  );
}

/** A short status of a result: `12 of 40`, `8.6 kB`, `readClimate ok`. */
export function resultStatus(op: Operation, result: OpResult): string {
  const { payload } = result;
  if (Buffer.isBuffer(payload)) return payload.length >= 1024 ? `${(payload.length / 1024).toFixed(1)} kB` : `${payload.length} B`;
  if (Array.isArray(payload)) return result.total !== undefined ? `${payload.length} of ${result.total}` : `${payload.length} items`;
  return `${op.name} ok`;
}

function toMessage(msg: NodeMessage, result: OpResult): void {
  msg.payload = result.payload;
  if (result.filename !== undefined) msg['filename'] = result.filename;
  if (result.contentType !== undefined) msg['contentType'] = result.contentType;
  if (result.total !== undefined) msg['total'] = result.total;
  if (result.missing !== undefined) msg['missing'] = result.missing;
}

/**
 * A node that runs operations of a table (ipcam-request, ipcam-edgerecord): the setting names
 * the operation (or `msg`); settings give parameter defaults, `msg.payload` fields override.
 */
export interface OperationNodeOptions {
  /** `always`: any message may choose another operation (a table of `read` operations only). */
  msgChooses: 'whenSettingIsMsg' | 'always';
  /** The operation of a node saved without one. */
  defaultOperation: string;
  /** The status text of a result (default `resultStatus`). */
  statusText?: (op: Operation, result: OpResult) => string;
}

export function registerOperationNode(RED: NodeAPI, spec: NodeSpec, table: ReadonlyMap<string, Operation>, options: OperationNodeOptions): void {
  function OperationNode(this: Node, def: OperationDef): void {
    RED.nodes.createNode(this, def);
    const setting = (def.operation ?? '').trim() || options.defaultOperation;
    const defaults = storedParams(def.params);
    handleInput(RED, this, spec, def.device, async (msg, client, signal): Promise<Status> => {
      const { operation: requested, ...given } = payloadFields(msg.payload) ?? {};
      // ipcam-edgerecord: any message may choose (its operations only read); ipcam-request: only
      // a node set to `msg`, and only a `read` operation (chooseOperation guards both).
      const chosen = options.msgChooses === 'always' && requested !== undefined && requested !== '' ? 'msg' : setting;
      const op = chooseOperation(table, chosen, requested);
      // Settings are defaults of the operation they were made for, not of one a message chose.
      const input = { ...(op.name === setting ? defaultsFor(op, defaults) : {}), ...given };
      const result = await runOperation(client, op, input, {
        signal,
        onProgress: (percent, stage) => this.status(progress(stage, percent)),
      });
      toMessage(msg, result);
      return operationDone((options.statusText ?? resultStatus)(op, result));
    }, def, () => (setting === 'msg' || table.has(setting) ? undefined : refusedSetting('operation', setting, `Unknown operation ${echo(setting)} in the Operation setting`, nearest(setting, table.keys()))));
  }
  RED.nodes.registerType(spec.type, OperationNode as (this: never, def: never) => void);
}
