/** What the tests of the operation table share: an entry by name, and the target it builds. */
import { strict as assert } from 'node:assert';
import { EDGE_RECORD_OPERATIONS, REQUEST_OPERATIONS, targetOf, type Operation } from '../lib/ops';

function entry(table: ReadonlyMap<string, Operation>, name: string): Operation {
  const found = table.get(name);
  assert.ok(found, `no operation ${name}`);
  return found;
}

/** The `ipcam-request` operation `name`. */
export function requestOp(name: string): Operation {
  return entry(REQUEST_OPERATIONS, name);
}

/** The `ipcam-edgerecord` operation `name`. */
export function edgeOp(name: string): Operation {
  return entry(EDGE_RECORD_OPERATIONS, name);
}

/** The request target (path and encoded query) `operation` builds for `input`, nothing sent. */
export function targetFor(operation: Operation, input: unknown): string {
  const build = operation.build;
  assert.ok(build, `${operation.name} has no single request`);
  return targetOf(build(input));
}

/** The request target of the `ipcam-request` operation `name` for `input`. */
export function requestTarget(name: string, input: unknown): string {
  return targetFor(requestOp(name), input);
}
