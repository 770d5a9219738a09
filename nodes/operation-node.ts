import { chooseOperation, runOperation, type Operation, type OpResult } from '../lib/ops';
import { echo } from '../lib/errors/echo';
import { isBlank, isSecretField } from '../lib/input/params';
import { refusedSetting } from '../lib/settings';
import { nearest } from '../lib/input/suggest';
import { payloadFields } from '../lib/input/payload';
import { operationDone } from '../lib/status/status';
import { defineAction, type ActionSpec, type NodeSpec, type SettingRules } from '../lib/node-spec';

/** What the dialog stored of the operation's parameters: an object, or its JSON (older or hand-edited flows). */
function storedParams(value: unknown): Record<string, unknown> {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
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

/** The properties of msg an operation's result sets beside its payload. */
function resultFields(result: OpResult): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  if (result.filename !== undefined) fields['filename'] = result.filename;
  if (result.contentType !== undefined) fields['contentType'] = result.contentType;
  if (result.total !== undefined) fields['total'] = result.total;
  if (result.missing !== undefined) fields['missing'] = result.missing;
  return fields;
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

/** What an operation node starts every message from: its Operation setting and the stored parameters. */
export interface OperationPlan {
  setting: string;
  defaults: Record<string, unknown>;
}

/**
 * The spec of a node that runs the operations of `table`: `base` declares its type, settings and
 * status words; the Operation setting is read on deploy against the table (one it lacks is
 * refused there, with the nearest name).
 */
export function operationSpec<S extends SettingRules>(
  base: NodeSpec<S>,
  table: ReadonlyMap<string, Operation>,
  options: OperationNodeOptions,
): ActionSpec<S, OperationPlan, { op: Operation; input: Record<string, unknown> }, OpResult> {
  return defineAction({
    ...base,
    deploy(_settings, stored): OperationPlan {
      const setting = (typeof stored['operation'] === 'string' ? stored['operation'] : '').trim() || options.defaultOperation;
      if (setting !== 'msg' && !table.has(setting)) throw refusedSetting('operation', setting, `Unknown operation ${echo(setting)} in the Operation setting`, nearest(setting, table.keys()));
      return { setting, defaults: storedParams(stored['params']) };
    },
    input(payload, { setting, defaults }) {
      const { operation: requested, ...given } = payloadFields(payload) ?? {};
      // ipcam-edgerecord: any message may choose (its operations only read); ipcam-request: only
      // a node set to `msg`, and only a `read` operation (chooseOperation guards both).
      const chosen = options.msgChooses === 'always' && requested !== undefined && requested !== '' ? 'msg' : setting;
      const op = chooseOperation(table, chosen, requested);
      // Settings are defaults of the operation they were made for, not of one a message chose.
      return { op, input: { ...(op.name === setting ? defaultsFor(op, defaults) : {}), ...given } };
    },
    run: (client, { op, input }, { signal, progress }) => runOperation(client, op, input, { signal, onProgress: (percent, stage) => progress(stage, percent) }),
    output: (result, { op }) => ({ payload: result.payload, fields: resultFields(result), status: operationDone((options.statusText ?? resultStatus)(op, result)) }),
  });
}
