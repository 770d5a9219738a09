import { IpcamError, inputError } from '../errors/errors';
import { echo } from '../errors/echo';
import { unknownKey } from '../input/suggest';
import { checkText, checkWhole } from '../input/params';
import type { Param } from '../input/params';
import type { DeviceClient } from '../transport/client';
import { runOp } from './runner';
import { defineOp, type OpContext, type Operation } from './types';
import { channelPath } from '../xml/channel';
import { buildDocument, child, elementToNode, items, path, type XmlElement } from '../xml/codec';

/** Plate recognition settings of one channel, typed. */
export interface VehicleConfig {
  enabled: boolean;
  /** 0-100 (the device's `plateSencitivity`). */
  sensitivity: number;
  /** Plate format region, one of `options.regions`. */
  region: string;
  saveTargetPicture: boolean;
  saveSourcePicture: boolean;
  /** API v2.0 and newer. */
  dedup?: { enabled: boolean; interval: number };
  /** Detection zone rectangle. */
  zone?: { x1: number; y1: number; x2: number; y2: number };
  /** API v2.0 and newer, e.g. `plateOnly`. */
  alarmMode?: string;
  /** The values the device offered. */
  options: { regions: Array<{ name: string; continent?: string }>; alarmLists: string[] };
}

export type VehicleConfigChange = Partial<Omit<VehicleConfig, 'options' | 'dedup' | 'zone'>> & {
  dedup?: Partial<NonNullable<VehicleConfig['dedup']>>;
  zone?: NonNullable<VehicleConfig['zone']>;
};

interface CallOptions {
  /** Channel id, 1 to `MAX_CHANNEL`, checked by the operation's entry (default: none in the path, which the device takes as 1). */
  channel?: unknown;
  signal?: AbortSignal;
}

/** Field notes: zone coordinates are on a 0-10000 scale. */
export const ZONE_MAX = 10_000;
/** Longest dedup interval accepted (s): one day. */
export const DEDUP_INTERVAL_MAX = 86_400;
/** Spec: plateSencitivity 0-100. */
export const SENSITIVITY_MAX = 100;
/** Longest region or alarm mode name sent (the spec gives none; names seen are short words). */
export const NAME_MAX = 64;

const CONFIG_VERSION = '2.0.0';
/** Field names as the spec spells them, with the spellings other firmware uses after them. */
const SENSITIVITY = ['plateSencitivity', 'plateSensitivity'];

/** Where a vehicle config call goes: the channel, checked (`channelPath`) before anything is sent. */
interface ChannelTarget {
  channel?: unknown;
}

function checkTarget(value: unknown): ChannelTarget {
  const channel = typeof value === 'object' && value !== null ? (value as ChannelTarget).channel : undefined;
  channelPath('/GetSmartVehicleConfig', channel);
  return channel === undefined ? {} : { channel };
}

const targetParam: Param<ChannelTarget> = { limits: { type: 'object', fields: {} }, parse: (value) => checkTarget(value) };

const changeParam: Param<ChannelTarget & { change: VehicleConfigChange }> = {
  limits: { type: 'object', fields: {} },
  parse(value) {
    const change = typeof value === 'object' && value !== null ? (value as { change?: unknown }).change : undefined;
    return { change: checkChange(change), ...checkTarget(value) };
  },
};

/** GetSmartVehicleConfig, typed. */
export const getVehicleConfigOp = defineOp({
  name: 'getVehicleConfig',
  api: 'xml',
  access: 'admin',
  class: 'read',
  summary: 'Reads the plate recognition settings of a channel',
  params: targetParam,
  run: async (ctx, p) => ({ payload: toConfig(await readDocument(ctx, p.channel)) }),
});

/**
 * Read-modify-write of a partial change; element names are sent back as the device spelled them.
 * Every check that needs no device is done before anything is sent (`EINPUT`). What only the
 * device's own document can tell (a region it lists, a setting it has) is checked after the read
 * (GetSmartVehicleConfig) and before any change is sent: `EDEVICE` (this device cannot), as the
 * request was sent, with nothing changed.
 */
export const setVehicleConfigOp = defineOp({
  name: 'setVehicleConfig',
  api: 'xml',
  access: 'admin',
  class: 'change',
  summary: 'Changes plate recognition settings of a channel (read, change, write, read back)',
  params: changeParam,
  async run(ctx, p) {
    const wanted = p.change;
    const setPath = channelPath('/SetSmartVehicleConfig', p.channel);
    const root = await readDocument(ctx, p.channel);
    const vehicle = child(root, 'vehicle');
    if (!vehicle) throw new IpcamError('EPARSE', 'GetSmartVehicleConfig answered without a vehicle block');
    checkOffered(toConfig(root), wanted);
    apply(vehicle, wanted);
    const body = buildDocument(root.attrs['version'] ?? CONFIG_VERSION, [elementToNode(vehicle)]);
    await ctx.xml({ path: setPath, xml: body });
    // What the device now holds, not what was sent: firmware may round or refuse silently.
    return { payload: toConfig(await readDocument(ctx, p.channel)) };
  },
});

/** The vehicle config calls of ipcam-vehicle-config, run by the one runner; not offered by ipcam-request. */
export const VEHICLE_CONFIG_OPERATIONS: readonly Operation[] = [getVehicleConfigOp, setVehicleConfigOp];

export function getVehicleConfig(client: DeviceClient, opts: CallOptions = {}): Promise<VehicleConfig> {
  return runOp(client, getVehicleConfigOp, opts.channel === undefined ? {} : { channel: opts.channel }, { signal: opts.signal });
}

/** See `setVehicleConfigOp`. */
export function setVehicleConfig(client: DeviceClient, change: unknown, opts: CallOptions = {}): Promise<VehicleConfig> {
  return runOp(client, setVehicleConfigOp, { change, ...(opts.channel !== undefined && { channel: opts.channel }) }, { signal: opts.signal });
}

/** A region must be one the device lists; a device that lists none cannot have one set. */
function checkOffered(current: VehicleConfig, wanted: VehicleConfigChange): void {
  if (wanted.region === undefined || current.options.regions.some((r) => r.name === wanted.region)) return;
  const offered = current.options.regions.length;
  // The device's own region names are not echoed: read the config for options.regions.
  throw new IpcamError(
    'EDEVICE',
    offered === 0
      ? `Region ${echo(wanted.region)} cannot be set: this device lists no regions; nothing was changed`
      : `Region ${echo(wanted.region)} is not one of the ${offered} regions this device offers (read the config: options.regions); nothing was changed`,
  );
}

async function readDocument(ctx: OpContext, channel: unknown): Promise<XmlElement> {
  const route = channelPath('/GetSmartVehicleConfig', channel);
  try {
    return await ctx.xml({ path: route });
  } catch (err) {
    // Field notes: API 2.1 firmware answers the old command with HTTP 400 / errorCode 1.
    const unsupported = err instanceof IpcamError && ((err.code === 'EDEVICE' && err.deviceCode === 1) || (err.code === 'EHTTP' && err.status === 400));
    if (!unsupported) throw err;
    throw new IpcamError('EDEVICE', 'GetSmartVehicleConfig is not supported by this firmware (newer API 2.1 devices dropped it)', {
      deviceCode: 1,
      ...(err.status !== undefined && { status: err.status }),
    });
  }
}

function toConfig(root: XmlElement): VehicleConfig {
  const v = child(root, 'vehicle');
  const text = (...names: string[]): string => path(v, ...names)?.text ?? '';
  const bool = (...names: string[]): boolean => text(...names) === 'true';
  const num = (el: XmlElement | undefined): number => Number(el?.text ?? NaN);
  const config: VehicleConfig = {
    enabled: bool('switch'),
    sensitivity: num(sensitivityElement(v)),
    region: text('plateSupportArea'),
    saveTargetPicture: bool('saveTargetPicture'),
    saveSourcePicture: bool('saveSourcePicture'),
    options: {
      regions: enumValues(path(root, 'types', 'plateAreaType')).map((e) => ({ name: e.text, ...(e.attrs['continent'] !== undefined && { continent: e.attrs['continent'] }) })),
      alarmLists: enumValues(path(root, 'types', 'alarmListType')).map((e) => e.text),
    },
  };
  const dedup = child(v, 'dedupMode');
  if (dedup) config.dedup = { enabled: child(dedup, 'switch')?.text === 'true', interval: num(child(dedup, 'intervalTime')) };
  const rect = items(child(v, 'regionInfo'))[0];
  if (rect) config.zone = { x1: num(child(rect, 'X1')), y1: num(child(rect, 'Y1')), x2: num(child(rect, 'X2')), y2: num(child(rect, 'Y2')) };
  const alarmMode = path(v, 'plateMatch', 'alarmMode');
  if (alarmMode) config.alarmMode = alarmMode.text;
  return config;
}

function sensitivityElement(vehicle: XmlElement | undefined): XmlElement | undefined {
  return SENSITIVITY.map((name) => child(vehicle, name)).find((el) => el !== undefined);
}

function enumValues(type: XmlElement | undefined): XmlElement[] {
  return type ? type.children.filter((c) => c.name === 'enum' || c.name === 'item') : [];
}

const BOOLEAN_FIELDS = ['enabled', 'saveTargetPicture', 'saveSourcePicture'] as const;

/** Every bound is checked here, before anything is sent. */
function checkChange(value: unknown): VehicleConfigChange {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw inputError('A vehicle config change must be an object');
  const c = value as Record<string, unknown>;
  const known = new Set(['enabled', 'sensitivity', 'region', 'saveTargetPicture', 'saveSourcePicture', 'dedup', 'zone', 'alarmMode', 'options']);
  const unknown = Object.keys(c).find((k) => !known.has(k));
  if (unknown) throw unknownKey(unknown, [...known], '; nothing was sent');
  const out: VehicleConfigChange = {};
  for (const key of BOOLEAN_FIELDS) {
    if (c[key] === undefined) continue;
    if (typeof c[key] !== 'boolean') throw inputError(`${key} must be true or false`);
    out[key] = c[key];
  }
  if (c['sensitivity'] !== undefined) out.sensitivity = wholeNumber(c['sensitivity'], 'sensitivity', 0, SENSITIVITY_MAX);
  if (c['region'] !== undefined) out.region = checkText(c['region'], { what: 'region', max: NAME_MAX, xml: true });
  if (c['alarmMode'] !== undefined) {
    const mode = checkText(c['alarmMode'], { what: 'alarmMode', max: NAME_MAX, xml: true });
    // An enumeration value (e.g. plateOnly): a word, nothing else.
    if (!/^[A-Za-z0-9_-]+$/.test(mode)) throw inputError(`alarmMode ${echo(mode)} is not a mode name like plateOnly`);
    out.alarmMode = mode;
  }
  if (c['dedup'] !== undefined) {
    const d = c['dedup'] as Record<string, unknown>;
    if (typeof d !== 'object' || d === null) throw inputError('dedup must be an object { enabled, interval }');
    out.dedup = {};
    if (d['enabled'] !== undefined) {
      if (typeof d['enabled'] !== 'boolean') throw inputError('dedup.enabled must be true or false');
      out.dedup.enabled = d['enabled'];
    }
    if (d['interval'] !== undefined) out.dedup.interval = wholeNumber(d['interval'], 'dedup.interval', 0, DEDUP_INTERVAL_MAX);
  }
  if (c['zone'] !== undefined) {
    const z = c['zone'] as Record<string, unknown>;
    if (typeof z !== 'object' || z === null) throw inputError('zone must be an object { x1, y1, x2, y2 }');
    const at = (key: string): number => wholeNumber(z[key], `zone.${key}`, 0, ZONE_MAX);
    const zone = { x1: at('x1'), y1: at('y1'), x2: at('x2'), y2: at('y2') };
    if (zone.x1 >= zone.x2) throw inputError(`zone: x1 (${zone.x1}) must be left of x2 (${zone.x2})`);
    if (zone.y1 >= zone.y2) throw inputError(`zone: y1 (${zone.y1}) must be above y2 (${zone.y2})`);
    out.zone = zone;
  }
  return out;
}

/** Numbers only (a config object is typed JS, not form text). */
function wholeNumber(value: unknown, what: string, min: number, max: number): number {
  if (typeof value !== 'number') throw inputError(`${what} must be a number, got ${echo(value)}`);
  return checkWhole(value, what, min, max);
}

/** Writes the change into the device's own document. */
function apply(vehicle: XmlElement, change: VehicleConfigChange): void {
  const set = (el: XmlElement | undefined, value: string | number | boolean, what: string): void => {
    if (!el) throw new IpcamError('EDEVICE', `This device has no ${what} setting; nothing was changed`);
    el.text = String(value);
  };
  if (change.enabled !== undefined) set(child(vehicle, 'switch'), change.enabled, 'switch');
  if (change.sensitivity !== undefined) set(sensitivityElement(vehicle), change.sensitivity, 'sensitivity');
  if (change.region !== undefined) set(child(vehicle, 'plateSupportArea'), change.region, 'region');
  if (change.saveTargetPicture !== undefined) set(child(vehicle, 'saveTargetPicture'), change.saveTargetPicture, 'saveTargetPicture');
  if (change.saveSourcePicture !== undefined) set(child(vehicle, 'saveSourcePicture'), change.saveSourcePicture, 'saveSourcePicture');
  if (change.dedup?.enabled !== undefined) set(path(vehicle, 'dedupMode', 'switch'), change.dedup.enabled, 'dedup (API v2.0)');
  if (change.dedup?.interval !== undefined) set(path(vehicle, 'dedupMode', 'intervalTime'), change.dedup.interval, 'dedup interval (API v2.0)');
  if (change.alarmMode !== undefined) set(path(vehicle, 'plateMatch', 'alarmMode'), change.alarmMode, 'alarm mode (API v2.0)');
  if (change.zone) {
    const rect = items(child(vehicle, 'regionInfo'))[0];
    set(child(rect, 'X1'), change.zone.x1, 'zone');
    set(child(rect, 'Y1'), change.zone.y1, 'zone');
    set(child(rect, 'X2'), change.zone.x2, 'zone');
    set(child(rect, 'Y2'), change.zone.y2, 'zone');
  }
}
