import { inputError } from '../errors';
import { echo } from '../echo';
import { checkText } from '../params';
import type { DeviceClient } from '../transport/client';
import { buildCgiPath, cgiFailure, parseKeyValues } from './codec';

export type AccessLevel = 'view' | 'operator' | 'admin';

export interface ParamCallOptions {
  /** Directory of the access level to use (default `admin`; `list` also works under `view`). */
  level?: AccessLevel;
  signal?: AbortSignal;
}

const PARAM_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.*-]*$/;
/** Longest parameter or group name (no device names one this long). */
export const PARAM_NAME_MAX = 128;
/**
 * Longest parameter value sent. The spec gives none; the answers are read line by line
 * (`Group.Name=value`), so a value holds no line break or other control character (a tab may).
 */
export const PARAM_VALUE_MAX = 1024;
/** Most names in one request. */
export const PARAM_NAMES_MAX = 64;

function paramPath(level: AccessLevel | undefined): string {
  if (level !== undefined && level !== 'view' && level !== 'operator' && level !== 'admin') throw inputError(`Access level ${echo(level)} is not view, operator or admin`);
  return `/cgi-bin/${level ?? 'admin'}/param`;
}

function checkNames(names: readonly unknown[], what: string): string[] {
  if (names.length > PARAM_NAMES_MAX) throw inputError(`At most ${PARAM_NAMES_MAX} names per request, got ${names.length}`);
  for (const name of names) {
    if (typeof name !== 'string' || name.length > PARAM_NAME_MAX || !PARAM_NAME.test(name)) {
      throw inputError(`${what} ${echo(name)} is not a parameter name like Image.I0.Appearance.Resolution (at most ${PARAM_NAME_MAX} characters)`);
    }
  }
  return names as string[];
}

/**
 * Reads parameters: `groups` like `['Network', 'Image.I0.*']` (empty = all). Keys come back
 * without the `root.` prefix; an unknown group gives an empty object, as devices answer.
 */
export async function listParams(client: DeviceClient, groups: string[] = [], opts: ParamCallOptions = {}): Promise<Record<string, string>> {
  if (!Array.isArray(groups)) throw inputError('Groups must be a list of names');
  checkNames(groups, 'Group');
  const path = buildCgiPath(paramPath(opts.level), { action: 'list', group: groups.length > 0 ? groups.join(',') : undefined });
  const res = await client.request({ path, signal: opts.signal });
  return Object.fromEntries(parseKeyValues(res.body));
}

/**
 * Assigns values, e.g. `{ 'Image.I0.Appearance.Resolution': '1280x720' }`; values are encoded.
 * An error line in the answer (`# Error: ...`) is `EDEVICE`.
 */
export async function updateParams(client: DeviceClient, values: Record<string, string | number | boolean>, opts: ParamCallOptions = {}): Promise<string> {
  if (typeof values !== 'object' || values === null || Array.isArray(values)) throw inputError('Parameters must be an object of names and values');
  const names = checkNames(Object.keys(values), 'Parameter');
  if (names.length === 0) throw inputError('Nothing to update: give at least one parameter');
  const pairs = names.map((n) => [n, checkParamValue(n, values[n])] as const);
  const path = buildCgiPath(paramPath(opts.level), [['action', 'update'], ...pairs]);
  const res = await client.request({ path, signal: opts.signal });
  return answer(res.body, 'parameter update', names, client);
}

/** Adds a group node from a template the device supports, e.g. `addParamGroup(c, 'Motion', 'motion')`. */
export async function addParamGroup(client: DeviceClient, group: string, template: string, opts: ParamCallOptions = {}): Promise<string> {
  checkNames([group, template], 'Name');
  const res = await client.request({ path: buildCgiPath(paramPath(opts.level), { action: 'add', group, template }), signal: opts.signal });
  return answer(res.body, 'parameter group add', [group, template], client);
}

export async function removeParamGroup(client: DeviceClient, group: string, opts: ParamCallOptions = {}): Promise<string> {
  checkNames([group], 'Group');
  const res = await client.request({ path: buildCgiPath(paramPath(opts.level), { action: 'remove', group }), signal: opts.signal });
  return answer(res.body, 'parameter group removal', [group], client);
}

/** A value as text: numbers and booleans as the device writes them, text by the value rule. */
function checkParamValue(name: string, value: unknown): string | number | boolean {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw inputError(`Parameter ${name} must be a finite number, got ${echo(value)}`);
    return value;
  }
  return checkText(value, { what: `Parameter ${name}`, max: PARAM_VALUE_MAX, min: 0, kind: 'value' });
}

function answer(body: Buffer, what: string, names: readonly string[], client: DeviceClient): string {
  const failure = cgiFailure(body, { what, names, secrets: client.secrets });
  if (failure) throw failure;
  return body.toString('utf8').trim();
}
