/**
 * The mechanism of the node settings: each node folder's spec (nodes/<type>/spec.ts, NodeSpec)
 * names its settings with the parsers of lib that check them (each range and allowed value written
 * once, in the lib module that owns it), `parseSettings` reads a deployed node's settings by them
 * into typed values (or refuses the first one out of them), and `settingsLimits` is what
 * `scripts/build.js` writes from every spec into the editor's generated rules file. A dialog
 * marks a bad value with exactly the limits the runtime enforces.
 */
import { CGI_MOVES, PRESET_MAX, PRESET_NAME_FORBIDDEN, PRESET_NAME_MAX, TOUR_MAX } from './ops/ptz-cgi';
import { echo } from './errors/echo';
import { IpcamError, inputError } from './errors/errors';
import { int, isBlank, labelled, oneOf, text, type FieldLimits, type Param } from './input/params';
import { nearest } from './input/suggest';
import { PTZ_ACTIONS } from './ops/ptz-xml';
import { XML_PTZ_COMMANDS } from './ops/ptz-mover';
import { XML_CRUISE_ID, XML_PRESET_ID, XML_PRESET_NAME_MAX } from './ops/ptz-presets';
import type { NodeSpec, SettingRules, SettingsOf, StoredSettings } from './node-spec';

/** The preset and tour commands a PTZ node's Action setting can name on the CGI interface (`move` needs msg.payload.move). */
const CGI_COMMANDS = ['gotoPreset', 'savePreset', 'removePreset', 'removeAllPresets', 'startTour', 'stopTour'] as const;

/** The PTZ interfaces: the actions a setting can name, and what msg.payload.preset and .tour take. */
export const PTZ_APIS = {
  xml: {
    action: oneOf([...PTZ_ACTIONS, ...XML_PTZ_COMMANDS]),
    preset: int(XML_PRESET_ID),
    presetName: text({ max: XML_PRESET_NAME_MAX }),
    tour: int(XML_CRUISE_ID),
  },
  cgi: {
    action: oneOf([...CGI_MOVES, ...CGI_COMMANDS]),
    preset: int({ min: 0, max: PRESET_MAX }),
    presetName: text({ max: PRESET_NAME_MAX, forbid: PRESET_NAME_FORBIDDEN }),
    tour: int({ min: 0, max: TOUR_MAX }),
  },
} as const;

/** The actions a message may name on each interface: the settings' and the CGI's own `move` (with `move`) and list commands, which it refuses with its reason. */
export const PTZ_PAYLOAD_ACTIONS = {
  xml: [...PTZ_ACTIONS, ...XML_PTZ_COMMANDS],
  cgi: [...CGI_MOVES, ...CGI_COMMANDS, 'move', 'listPresets', 'listTours'],
} as const satisfies Record<keyof typeof PTZ_APIS, readonly string[]>;

/** A PTZ node's Interface setting: one of PTZ_APIS. */
export const PTZ_API_SETTING = labelled(oneOf(Object.keys(PTZ_APIS) as (keyof typeof PTZ_APIS)[]), 'Interface');

type LimitsOf<T> = { [K in keyof T]: T[K] extends Param<unknown> ? FieldLimits : LimitsOf<T[K]> };

function limitsOf<T extends Record<string, unknown>>(params: T): LimitsOf<T> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(params)) {
    out[name] = typeof value === 'object' && value !== null && 'limits' in value && 'parse' in value ? (value as Param<unknown>).limits : limitsOf(value as Record<string, unknown>);
  }
  return out as LimitsOf<T>;
}

/**
 * The limits of the settings of each node of `specs`, in their order, and of the PTZ interfaces,
 * as JSON-safe data for the editor. Two specs of one type are a mistake the build must not hide.
 */
export function settingsLimits(specs: readonly NodeSpec[]): { nodes: Record<string, Record<string, FieldLimits>>; ptz: LimitsOf<typeof PTZ_APIS> } {
  const nodes: Record<string, Record<string, FieldLimits>> = {};
  for (const { type, settings } of specs) {
    if (Object.hasOwn(nodes, type)) throw new Error(`Two node specs declare ${type}`);
    nodes[type] = limitsOf(settings) as Record<string, FieldLimits>;
  }
  return { nodes, ptz: limitsOf(PTZ_APIS) };
}

/**
 * A setting out of its rules, as the EINPUT the node answers every message with (DESIGN: settings
 * are checked on deploy): `problem` names the setting (its label) and what was wrong, and the
 * nearest valid value is added where there is one, in the status too (`operation getDeviceInfo?`).
 */
export function refusedSetting(name: string, given: unknown, problem: string, nearestValue: string | undefined): IpcamError {
  const hint = nearestValue === undefined ? '' : ` (nearest valid value: ${echo(nearestValue)})`;
  return inputError(`${problem}${hint}; nothing is sent until the setting ${name} ${echo(given, 40)} is changed and deployed`, nearestValue === undefined ? undefined : `${name} ${nearestValue}?`);
}

/** The valid value nearest to a refused one: the closest word of a list, the end of a range. */
function nearestValid(limits: FieldLimits, given: unknown): string | undefined {
  if (limits.type === 'oneOf') return typeof given === 'string' ? nearest(given.trim(), limits.values) : undefined;
  if (limits.type === 'bool') return typeof given === 'string' ? nearest(given.trim(), ['true', 'false']) : undefined;
  if (limits.type === 'int' || limits.type === 'number') {
    const n = typeof given === 'number' ? given : typeof given === 'string' ? Number(given.trim()) : NaN;
    if (!Number.isFinite(n)) return undefined;
    const clamped = Math.min(limits.max, Math.max(limits.min, n));
    return String(limits.type === 'int' ? Math.round(clamped) : clamped);
  }
  return undefined;
}

/** The label a setting's problem names it by: its rule's label, else its name capitalised. */
function settingLabel(name: string, param: Param<unknown>): string {
  return param.limits.label ?? `${name.charAt(0).toUpperCase()}${name.slice(1)}`;
}

/**
 * A node's settings parsed by their rules, once, on deploy (DESIGN: settings are checked on
 * deploy): typed values for every message to use, or the EINPUT naming the first setting out of
 * its rules and its nearest valid value, which the node answers every message with. A setting
 * absent or blank (a flow saved before the setting existed) is not refused: it is its rule's
 * default, or undefined. `ignore` names settings the node's current mode does not use (the
 * detection stream's Emit in single mode): a stale value there must not stop the node.
 */
export function parseSettings<S extends SettingRules>(
  rules: S,
  stored: StoredSettings,
  ignore: readonly (keyof S & string)[] = [],
): { settings: SettingsOf<S>; refused?: undefined } | { settings?: undefined; refused: IpcamError; setting: keyof S & string } {
  const settings: Record<string, unknown> = {};
  for (const [name, param] of Object.entries(rules)) {
    if (ignore.includes(name)) continue;
    const value = stored[name];
    // Only an optional rule has a value for blank (its default); a required one is left unset.
    if (isBlank(value) && !param.limits.optional) continue;
    try {
      settings[name] = param.parse(value, settingLabel(name, param));
    } catch (err) {
      if (!(err instanceof IpcamError)) throw err;
      return { refused: refusedSetting(name, value, err.message, nearestValid(param.limits, value)), setting: name };
    }
  }
  return { settings: settings as SettingsOf<S> };
}
