/**
 * The settings of every node, as the parsers that check them: each range and allowed value is
 * taken from the lib module that owns it (never written again here), and `settingsLimits()` is
 * what `scripts/build.js` writes into the editor's generated rules file. A dialog marks a bad
 * value with exactly the limits the runtime enforces.
 */
import { DETECTION_TYPES, IO_IDS, IO_KINDS } from './ops/io';
import { CGI_MOVES, PRESET_MAX, PRESET_NAME_FORBIDDEN, PRESET_NAME_MAX, TOUR_MAX } from './ops/ptz-cgi';
import { RELAY_SETTINGS } from './ops/relay';
import { SNAPSHOT_FORMATS, SNAPSHOT_SOURCES } from './ops/snapshot';
import { DISCOVERY_DURATION, DISCOVERY_INTERFACE, DISCOVERY_TARGETS } from './discovery/probe';
import { DEDUP_WINDOW_MAX_S } from './events/dedup';
import { GROUPS_SETTING } from './events/filter';
import { LIST_TYPES } from './events/parse';
import { IMAGE_MODES } from './events/plate-message';
import { EVENT_SERVER_SETTINGS } from './events/server';
import { echo } from './errors/echo';
import { IpcamError, inputError } from './errors/errors';
import { int, isBlank, labelled, oneOf, optional, text, withDefault, type FieldLimits, type Param } from './input/params';
import { nearest } from './input/suggest';
import { OVERRIDES } from './payload';
import { MAX_DURATION } from './ops/ptz-timed-moves';
import { HOST, PORT, TIMEOUT } from './transport/options';
import { HEARTBEAT } from './health/heartbeat-setting';
import { MAX_CHANNEL } from './xml/channel';
import { PLATE_GROUP } from './ops/plate-input';
import { DEFAULT_SPEED_RANGE, PTZ_ACTIONS } from './ops/ptz-xml';
import { XML_PTZ_COMMANDS } from './ops/ptz-mover';
import { XML_CRUISE_ID, XML_PRESET_ID, XML_PRESET_NAME_MAX } from './ops/ptz-presets';
import { UI_CAMERA_SETTINGS, UI_PLATES_SETTINGS } from './widgets/settings';
import { HA_SETTINGS } from './ha/settings';

/** A channel setting: blank leaves the device's default. */
const CHANNEL = optional(int({ min: 1, max: MAX_CHANNEL }));
const PLATE_NODE = { group: PLATE_GROUP };

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

/** Every node type's settings that a dialog checks, by setting name. */
export const NODE_SETTINGS: Record<string, Record<string, Param<unknown>>> = {
  'ipcam-device': {
    host: HOST,
    port: optional(PORT),
    protocol: oneOf(['http', 'https']),
    auth: oneOf(['auto', 'basic', 'digest']),
    timeout: TIMEOUT,
    heartbeat: HEARTBEAT,
  },
  'ipcam-snapshot': { source: oneOf(SNAPSHOT_SOURCES), channel: CHANNEL, format: oneOf(SNAPSHOT_FORMATS), overrides: OVERRIDES },
  'ipcam-plate-add': PLATE_NODE,
  'ipcam-plate-query': { ...PLATE_NODE, overrides: OVERRIDES },
  'ipcam-plate-modify': PLATE_NODE,
  'ipcam-plate-delete': PLATE_NODE,
  'ipcam-plate-sync': PLATE_NODE,
  'ipcam-vehicle-config': { channel: CHANNEL, overrides: OVERRIDES },
  'ipcam-event-server': EVENT_SERVER_SETTINGS,
  'ipcam-plate-event': {
    lists: oneOf(LIST_TYPES),
    groups: GROUPS_SETTING,
    dedup: withDefault(int({ min: 0, max: DEDUP_WINDOW_MAX_S }), 0),
    images: oneOf(IMAGE_MODES),
  },
  'ipcam-detection-stream': { detection: oneOf(DETECTION_TYPES), groups: optional(IO_IDS), mode: oneOf(['stream', 'single']), emit: oneOf(['every', 'change', 'trigger']) },
  'ipcam-input-monitor': { kind: oneOf(IO_KINDS), ports: optional(IO_IDS) },
  'ipcam-ptz': {
    api: labelled(oneOf(['xml', 'cgi']), 'Interface'),
    speed: optional(int(DEFAULT_SPEED_RANGE)),
    duration: withDefault(int({ min: 0, max: MAX_DURATION }), 0),
    channel: CHANNEL,
    overrides: OVERRIDES,
  },
  'ipcam-relay': { ...RELAY_SETTINGS, overrides: OVERRIDES },
  'ipcam-edgerecord': { overrides: OVERRIDES },
  'ipcam-request': { overrides: OVERRIDES },
  'ipcam-discover': { duration: DISCOVERY_DURATION, interface: optional(DISCOVERY_INTERFACE), targets: optional(DISCOVERY_TARGETS) },
  // Device only (an ipcam-device, or blank for every one): nothing for a rule to check.
  'ipcam-device-status': {},
  'ipcam-ha': HA_SETTINGS,
  'ipcam-ui-camera': UI_CAMERA_SETTINGS,
  'ipcam-ui-plates': UI_PLATES_SETTINGS,
};

type LimitsOf<T> = { [K in keyof T]: T[K] extends Param<unknown> ? FieldLimits : LimitsOf<T[K]> };

function limitsOf<T extends Record<string, unknown>>(params: T): LimitsOf<T> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(params)) {
    out[name] = typeof value === 'object' && value !== null && 'limits' in value && 'parse' in value ? (value as Param<unknown>).limits : limitsOf(value as Record<string, unknown>);
  }
  return out as LimitsOf<T>;
}

/** The limits of every node setting and of the PTZ interfaces, as JSON-safe data for the editor. */
export function settingsLimits(): { nodes: Record<string, Record<string, FieldLimits>>; ptz: LimitsOf<typeof PTZ_APIS> } {
  const nodes: Record<string, Record<string, FieldLimits>> = {};
  for (const [type, params] of Object.entries(NODE_SETTINGS)) nodes[type] = limitsOf(params) as Record<string, FieldLimits>;
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
  if (limits.type === 'int' || limits.type === 'number') {
    const n = typeof given === 'number' ? given : typeof given === 'string' ? Number(given.trim()) : NaN;
    if (!Number.isFinite(n)) return undefined;
    const clamped = Math.min(limits.max, Math.max(limits.min, n));
    return String(limits.type === 'int' ? Math.round(clamped) : clamped);
  }
  return undefined;
}

/**
 * The first setting of a node of `type` that its rules (NODE_SETTINGS) refuse, or undefined. A
 * setting absent or blank (a flow saved before the setting existed) is not refused: it takes its
 * default, as the node reads it.
 */
export function settingsProblem(type: string, def: Readonly<Record<string, unknown>>): IpcamError | undefined {
  const rules = Object.hasOwn(NODE_SETTINGS, type) ? NODE_SETTINGS[type] : undefined;
  for (const [name, param] of Object.entries(rules ?? {})) {
    const value = def[name];
    if (isBlank(value)) continue;
    try {
      param.parse(value, param.limits.label ?? `${name.charAt(0).toUpperCase()}${name.slice(1)}`);
    } catch (err) {
      if (!(err instanceof IpcamError)) throw err;
      return refusedSetting(name, value, err.message, nearestValid(param.limits, value));
    }
  }
  return undefined;
}
