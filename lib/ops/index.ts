/**
 * The operation table of `ipcam-request` and `ipcam-edgerecord`: every entry, by name. Each
 * section file holds the operations of one part of the specs.
 */
import { CERTIFICATES_OPERATIONS } from './certificates';
import { DEVICE_OPERATIONS } from './device';
import { EDGE_OPERATIONS } from './edge';
import { EQUIPMENT_OPERATIONS } from './equipment';
import { FILES_OPERATIONS } from './files';
import { MAINTENANCE_OPERATIONS } from './maintenance';
import { MEDIA_OPERATIONS } from './media';
import { PARAMETERS_OPERATIONS } from './parameters';
import { SERVETEST_OPERATIONS } from './servetest';
import type { Operation } from './types';
import { IO_OPERATIONS } from './io';
import { PLATE_OPERATIONS } from './plates';
import { CGI_PTZ_OPERATIONS } from './ptz-cgi';
import { XML_PTZ_OPERATIONS } from './ptz-xml';
import { XML_PRESET_OPERATIONS } from './ptz-presets';
import { DEVICE_INFO_OPERATIONS } from './device-info';
import { RELAY_OPERATIONS } from './relay';
import { SNAPSHOT_OPERATIONS } from './snapshot';
import { VEHICLE_CONFIG_OPERATIONS } from './vehicle-config';
import { secretFieldNames, withoutFields } from '../input/params';

function tableOf(operations: readonly Operation[]): ReadonlyMap<string, Operation> {
  const table = new Map<string, Operation>();
  for (const op of operations) {
    if (table.has(op.name)) throw new Error(`Operation ${op.name} is defined twice`);
    table.set(op.name, op);
  }
  return table;
}

/** The operations of `ipcam-request`, in the order of the DESIGN table. */
export const REQUEST_OPERATIONS = tableOf([
  ...DEVICE_OPERATIONS,
  ...PARAMETERS_OPERATIONS,
  ...MAINTENANCE_OPERATIONS,
  ...MEDIA_OPERATIONS,
  ...SERVETEST_OPERATIONS,
  ...CERTIFICATES_OPERATIONS,
  ...FILES_OPERATIONS,
  ...EQUIPMENT_OPERATIONS,
]);

/**
 * The device calls the other nodes make (relay, I/O check and detection reading, CGI PTZ,
 * snapshot, plate database, vehicle config): entries run by the same runner, in tables of their
 * own, never offered by `ipcam-request` (none is chosen by a message).
 */
export const NODE_OPERATIONS = tableOf([
  ...RELAY_OPERATIONS,
  ...IO_OPERATIONS,
  ...CGI_PTZ_OPERATIONS,
  ...XML_PTZ_OPERATIONS,
  ...XML_PRESET_OPERATIONS,
  ...SNAPSHOT_OPERATIONS,
  ...PLATE_OPERATIONS,
  ...VEHICLE_CONFIG_OPERATIONS,
  ...DEVICE_INFO_OPERATIONS,
]);

/** The operations of `ipcam-edgerecord`. */
export const EDGE_RECORD_OPERATIONS = tableOf(EDGE_OPERATIONS);

/**
 * Every secret parameter of the tables (lower case), from the vocabulary's `secret` fields: a
 * failed message loses these fields of its payload before a Catch node sees it, whichever
 * operation it named (a mistyped operation name must not let a password through).
 */
export const SECRET_PARAM_NAMES: ReadonlySet<string> = new Set(
  [...REQUEST_OPERATIONS.values(), ...EDGE_RECORD_OPERATIONS.values()].flatMap((op) => secretFieldNames(op.params)).map((name) => name.toLowerCase()),
);

/** `payload` without its secret parameters (`SECRET_PARAM_NAMES`, in any case); the rest untouched. */
export function withoutSecretParams(payload: unknown): unknown {
  return withoutFields(payload, SECRET_PARAM_NAMES);
}

export { chooseOperation, contextFor, runOp, runOperation, targetOf, type RunOptions } from './runner';
export { OP_CLASSES } from './types';
export type { Operation, OpClass, OpRequest, OpResult, OpContext, CgiAnswer } from './types';
