/**
 * The parameter operations (spec 4.2) as library functions. Each runs its entry of the operation
 * table (lib/ops/parameters.ts) through the one runner: the same checks, request and parser as
 * `ipcam-request`.
 */
import { runOp, type Reporting, type RunOptions } from './runner';
import * as ops from './parameters';
import type { ParamGroupAdded, ParamsUpdated } from './parameters';
import type { AccessLevel } from './types';
import type { DeviceClient } from '../transport/client';

export type { AccessLevel } from './types';
export type { ParamGroupAdded, ParamsUpdated } from './parameters';

export interface ParamCallOptions extends Reporting {
  /** Directory of the access level to use (default `admin`; `list` also works under `view`, changes not). */
  level?: AccessLevel;
  signal?: AbortSignal;
}

/**
 * Reads parameters: `groups` like `['Network', 'Image.I0.*']` (empty = all), sent as repeated
 * `group=` keys. Keys come back without the `root.` prefix; an unknown group gives `{}`.
 */
export function listParams(client: DeviceClient, groups: readonly string[] = [], opts: ParamCallOptions = {}): Promise<Record<string, string>> {
  return runOp(client, ops.listParams, { group: groups, level: opts.level }, runOf(opts));
}

/**
 * Assigns values, e.g. `{ 'Image.I0.Appearance.Resolution': '1280x720' }`; values are encoded.
 * An error line in the answer (`# Error: ...`) is `EDEVICE`.
 */
export function updateParams(client: DeviceClient, values: Record<string, string | number | boolean>, opts: ParamCallOptions = {}): Promise<ParamsUpdated> {
  return runOp(client, ops.updateParams, { params: values, level: opts.level }, runOf(opts));
}

/** Adds a group node from a template the device supports, e.g. `addParamGroup(c, 'Motion', 'motion')`. */
export function addParamGroup(client: DeviceClient, group: string, template: string, opts: ParamCallOptions = {}): Promise<ParamGroupAdded> {
  return runOp(client, ops.addParamGroup, { group, template, level: opts.level }, runOf(opts));
}

/** Removes a group node and everything under it, e.g. `removeParamGroup(c, 'Motion.M2')`. */
export function removeParamGroup(client: DeviceClient, group: string, opts: ParamCallOptions = {}): Promise<{ ok: true }> {
  return runOp(client, ops.removeParamGroup, { group, level: opts.level }, runOf(opts));
}

function runOf(opts: ParamCallOptions): RunOptions {
  return { signal: opts.signal, report: opts.report };
}
