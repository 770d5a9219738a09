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

/** The operations of `ipcam-edgerecord`. */
export const EDGE_RECORD_OPERATIONS = tableOf(EDGE_OPERATIONS);

export { chooseOperation, contextFor, runOperation, targetOf, type RunOptions } from './runner';
export { OP_CLASSES } from './types';
export type { Operation, OpClass, OpRequest, OpResult, OpContext, CgiAnswer } from './types';
