import { IpcamError, inputError } from '../errors/errors';
import type { DeviceClient } from '../transport/client';
import { runOp } from './runner';
import { defineOp, type Operation } from './types';
import { echo } from '../errors/echo';
import { checkWhole, objectParam } from '../input/params';
import { checkChannel as checkChannelId } from '../xml/channel';
import { buildDocument, child, path, toTyped, xml, type XmlElement, type XmlValue } from '../xml/codec';

/** The 15 actions of PtzControl. */
export const PTZ_ACTIONS = [
  'Up',
  'Down',
  'Left',
  'Right',
  'LeftUp',
  'LeftDown',
  'RightUp',
  'RightDown',
  'ZoomIn',
  'ZoomOut',
  'Near',
  'Far',
  'IrisOpen',
  'IrisClose',
  'Stop',
] as const;
export type PtzAction = (typeof PTZ_ACTIONS)[number];

export interface SpeedRange {
  min: number;
  max: number;
}

/** Spec: typically 1-8 when the device does not say. */
export const DEFAULT_SPEED_RANGE: SpeedRange = { min: 1, max: 8 };

/** `'left'`, `'LEFT'` or `'Left'` to the action's spelling; anything else is `EINPUT`. */
export function ptzAction(value: unknown): PtzAction {
  // Longer text is no action: it is neither lower-cased nor copied whole into the error.
  const wanted = typeof value === 'string' && value.length <= 32 ? value.trim().toLowerCase() : undefined;
  const found = wanted === undefined ? undefined : PTZ_ACTIONS.find((a) => a.toLowerCase() === wanted);
  if (!found) throw inputError(`Unknown PTZ action ${echo(value)}: use one of ${PTZ_ACTIONS.join(', ')}`);
  return found;
}

/** The channel of a PTZ command: 1 when none is given. */
export function checkChannel(value: unknown): number {
  return value === undefined || value === null || value === '' ? 1 : checkChannelId(value);
}

export function checkSpeed(value: unknown, range: SpeedRange): number {
  return checkWhole(value, 'Speed', range.min, range.max);
}

/** PtzGetCaps of a channel: the request (no body). */
export function ptzCapsPath(channel: number): string {
  return `/PtzGetCaps/${checkChannel(channel)}`;
}

/** What PtzGetCaps tells: the speed range, and every other field the device sends, typed. */
export interface PtzCaps {
  minSpeed: number;
  maxSpeed: number;
  presetMaxCount?: number;
  cruiseMaxCount?: number;
  [field: string]: XmlValue | undefined;
}

/** Reads a PtzGetCaps answer: `controlMinSpeed`/`controlMaxSpeed` as `minSpeed`/`maxSpeed`, the rest typed as sent. */
export function parsePtzCaps(root: XmlElement): PtzCaps {
  const caps = child(root, 'caps') ?? root;
  const min = Number(path(caps, 'controlMinSpeed')?.text);
  const max = Number(path(caps, 'controlMaxSpeed')?.text);
  if (!Number.isInteger(min) || !Number.isInteger(max) || min > max) throw new IpcamError('EPARSE', 'PtzGetCaps answered no speed range');
  const typed = toTyped(caps);
  const fields = typeof typed === 'object' && !Array.isArray(typed) ? typed : {};
  const rest = Object.entries(fields).filter(([name]) => name !== 'controlMinSpeed' && name !== 'controlMaxSpeed');
  return { minSpeed: min, maxSpeed: max, ...Object.fromEntries(rest) };
}

/** `{ channel }`: 1 when none is given. */
const channelParam = objectParam((fields) => checkChannel(fields['channel']));

/** PtzGetCaps of a channel on the control lane: the speed range a move is checked against. */
export const ptzSpeedRangeOp = defineOp({
  name: 'ptzSpeedRange',
  api: 'xml',
  access: 'view',
  class: 'read',
  summary: 'Reads the PTZ speed range of a channel (PtzGetCaps), for the moves',
  params: channelParam,
  request: (channel) => ({ path: ptzCapsPath(channel), control: true, repeatable: true }),
  parse(root): { payload: SpeedRange } {
    const caps = parsePtzCaps(root);
    return { payload: { min: caps.minSpeed, max: caps.maxSpeed } };
  },
});

/** PtzGetCaps: the speed range of a channel. */
export function getPtzCaps(client: DeviceClient, channel = 1, signal?: AbortSignal): Promise<SpeedRange> {
  return runOp(client, ptzSpeedRangeOp, { channel }, { signal });
}

const rangeCache = new WeakMap<DeviceClient, Map<number, Promise<SpeedRange>>>();

/** The speed range, read once per device and channel; 1-8 when the device cannot tell. */
export function speedRange(client: DeviceClient, channel: number): Promise<SpeedRange> {
  let perChannel = rangeCache.get(client);
  if (!perChannel) rangeCache.set(client, (perChannel = new Map()));
  let range = perChannel.get(channel);
  if (!range) {
    range = getPtzCaps(client, channel).catch((err: unknown) => {
      // Credentials and connection problems are not "no caps": let the next move ask again.
      if (err instanceof IpcamError && (err.code === 'EAUTH' || err.code === 'ECONN' || err.code === 'ETIMEOUT')) {
        perChannel?.delete(channel);
        throw err;
      }
      return DEFAULT_SPEED_RANGE;
    });
    perChannel.set(channel, range);
  }
  return range;
}

/** A PtzControl command: the action, a speed the mover has checked against the device's range, the channel. */
interface PtzControlCommand {
  action: PtzAction;
  speed: number;
  channel: number;
}

/** Speeds are checked against the device's own range (`speedRange`) before they get here; this bound is the wire's. */
const SPEED_MAX = 255;

const controlParam = objectParam((fields): PtzControlCommand => ({ action: ptzAction(fields['action']), speed: checkWhole(fields['speed'], 'Speed', 0, SPEED_MAX), channel: checkChannel(fields['channel'] ?? 1) }));

/** PtzControl: `/PtzControl/<channel>/<action>` with `actionInfo/speed`, on the control lane. */
export const ptzControlOp = defineOp({
  name: 'ptzControl',
  api: 'xml',
  access: 'operator',
  class: 'change',
  summary: 'One PTZ move, zoom, focus or iris command of the XML interface (PtzControl)',
  params: controlParam,
  // Spec 4.6: every action lasts until Stop, so each sent twice does what it does once.
  request: (c) => ({ path: `/PtzControl/${c.channel}/${c.action}`, xml: buildDocument('1.0', [xml.uint('speed', c.speed)], 'actionInfo'), control: true, repeatable: true }),
  parse: (_root, c) => ({ payload: c }),
});

/** The XML PTZ calls of ipcam-ptz run as entries; not offered by ipcam-request. */
export const XML_PTZ_OPERATIONS: readonly Operation[] = [ptzControlOp, ptzSpeedRangeOp];

export async function ptzControl(client: DeviceClient, action: PtzAction, speed: number, channel = 1, signal?: AbortSignal): Promise<void> {
  await runOp(client, ptzControlOp, { action, speed, channel }, { signal });
}
