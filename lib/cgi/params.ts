import { inputError } from '../errors';
import type { DeviceClient } from '../transport/client';
import { buildCgiPath, parseKeyValues } from './codec';

export type AccessLevel = 'view' | 'operator' | 'admin';

export interface ParamCallOptions {
  /** Directory of the access level to use (default `admin`; `list` also works under `view`). */
  level?: AccessLevel;
  signal?: AbortSignal;
}

const PARAM_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.*-]*$/;

function paramPath(level: AccessLevel | undefined): string {
  return `/cgi-bin/${level ?? 'admin'}/param`;
}

function checkNames(names: string[], what: string): void {
  for (const name of names) {
    if (typeof name !== 'string' || !PARAM_NAME.test(name)) throw inputError(`${what} "${String(name)}" is not a parameter name like Image.I0.Appearance.Resolution`);
  }
}

/**
 * Reads parameters: `groups` like `['Network', 'Image.I0.*']` (empty = all). Keys come back
 * without the `root.` prefix; an unknown group gives an empty object, as devices answer.
 */
export async function listParams(client: DeviceClient, groups: string[] = [], opts: ParamCallOptions = {}): Promise<Record<string, string>> {
  checkNames(groups, 'Group');
  const path = buildCgiPath(paramPath(opts.level), { action: 'list', group: groups.length > 0 ? groups.join(',') : undefined });
  const res = await client.request({ path, signal: opts.signal });
  return Object.fromEntries(parseKeyValues(res.body));
}

/** Assigns values, e.g. `{ 'Image.I0.Appearance.Resolution': '1280x720' }`; values are encoded. */
export async function updateParams(client: DeviceClient, values: Record<string, string | number | boolean>, opts: ParamCallOptions = {}): Promise<string> {
  const names = Object.keys(values);
  if (names.length === 0) throw inputError('Nothing to update: give at least one parameter');
  checkNames(names, 'Parameter');
  const path = buildCgiPath(paramPath(opts.level), [['action', 'update'], ...names.map((n) => [n, values[n] as string | number | boolean] as const)]);
  const res = await client.request({ path, signal: opts.signal });
  return res.body.toString('utf8').trim();
}

/** Adds a group node from a template the device supports, e.g. `addParamGroup(c, 'Motion', 'motion')`. */
export async function addParamGroup(client: DeviceClient, group: string, template: string, opts: ParamCallOptions = {}): Promise<string> {
  checkNames([group, template], 'Name');
  const res = await client.request({ path: buildCgiPath(paramPath(opts.level), { action: 'add', group, template }), signal: opts.signal });
  return res.body.toString('utf8').trim();
}

export async function removeParamGroup(client: DeviceClient, group: string, opts: ParamCallOptions = {}): Promise<string> {
  checkNames([group], 'Group');
  const res = await client.request({ path: buildCgiPath(paramPath(opts.level), { action: 'remove', group }), signal: opts.signal });
  return res.body.toString('utf8').trim();
}
