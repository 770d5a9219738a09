/**
 * What an action node's `msg.payload` may hold, written once: the keys of each node's payload
 * object (DESIGN's message table), the `overrides` setting, and the one check every node runs
 * before anything is sent. A key nobody asked for is EINPUT naming it and the nearest known key,
 * never ignored: `{ "stat": "off" }` must not switch a relay on by its Mode setting.
 */
import { echo } from './errors/echo';
import { inputError } from './errors/errors';
import { nearest, unknownKey, unknownWord } from './input/suggest';
import { oneOf, withDefault } from './input/params';

/**
 * The `overrides` setting of an action node: `payload` (also when absent) lets a payload command
 * the node, strictly; `none` runs the node exactly as set whatever the message (an event wired
 * straight into an action), its payload never read.
 */
export const OVERRIDES_VALUES = ['payload', 'none'] as const;
export type Overrides = (typeof OVERRIDES_VALUES)[number];
export const OVERRIDES = withDefault(oneOf(OVERRIDES_VALUES), 'payload');

/** The fields of a plate as flows give it (plate-add, plate-modify, plate-sync). */
const PLATE_FIELDS = ['plate', 'group', 'owner', 'phone', 'begin', 'end'] as const;

/** The keys of each node's `msg.payload` object. */
export const PAYLOAD_KEYS: Readonly<Record<string, readonly string[]>> = {
  'ipcam-snapshot': ['source', 'params', 'channel'],
  // continuous, home and stream belong to the CGI interface, move to its action 'move'; the
  // interface itself refuses them where they do not apply.
  'ipcam-ptz': ['action', 'speed', 'duration', 'channel', 'preset', 'tour', 'continuous', 'home', 'stream', 'move'],
  'ipcam-relay': ['output', 'state', 'pulse', 'sequence'],
  'ipcam-plate-query': ['group', 'offset', 'limit'],
  'ipcam-plate-modify': PLATE_FIELDS,
};

/** The keys of each item of a node's plate list (a list, or one item alone). */
export const PAYLOAD_ITEM_KEYS: Readonly<Record<string, readonly string[]>> = {
  'ipcam-plate-add': PLATE_FIELDS,
  'ipcam-plate-delete': ['plate', 'group'],
  // A plate-query's records are a desired list as they come (type and card are not synced).
  'ipcam-plate-sync': [...PLATE_FIELDS, 'type', 'card'],
};

/** Node types whose payload only overrides settings that alone make a whole command. */
export const OVERRIDABLE_TYPES: readonly string[] = ['ipcam-snapshot', 'ipcam-ptz', 'ipcam-relay', 'ipcam-plate-query', 'ipcam-vehicle-config', 'ipcam-edgerecord', 'ipcam-request'];

/** A plain object (what JSON gives), not a list, Buffer, Date or Map: only those carry keys to check. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * What the sender of a message the node cannot read may do instead: an Inject's timestamp, an
 * event or a sensor's reading wired into an action is the usual cause, not a misspelt command.
 */
export const NONE_HINT = "; to run the node as set whatever the message (an Inject's timestamp, an event), set its Overrides to none";

/**
 * Checks the keys of a payload for `type` (a node type) before anything is sent: every key of an
 * object payload (and of each item of a plate list) must be one its row names. A non-empty object
 * with none of them is refused naming the keys and the `overrides` setting: an event wired into an
 * action is the usual cause. Payloads that are not objects keep their meaning (short forms).
 */
export function checkPayloadKeys(type: string, payload: unknown): void {
  const keys = PAYLOAD_KEYS[type];
  if (keys !== undefined && isPlainObject(payload)) checkKeys(payload, keys, OVERRIDABLE_TYPES.includes(type));
  const itemKeys = PAYLOAD_ITEM_KEYS[type];
  if (itemKeys === undefined) return;
  // A longer list is refused whole by the operation (MAX_PLATES) before anything is sent.
  for (const item of Array.isArray(payload) ? payload : [payload]) if (isPlainObject(item)) checkKeys(item, itemKeys, false);
}

function checkKeys(given: Record<string, unknown>, known: readonly string[], overridable: boolean): void {
  const names = Object.keys(given);
  const unknown = names.find((k) => !known.includes(k));
  if (unknown === undefined) return;
  // A misspelt command (`{ stat }`) has each key near one of ours; an object meant for something
  // else (a plate event wired into a relay) has not, and a guess at its first key would mislead.
  const noneOfOurs = overridable && !names.some((k) => known.includes(k));
  const foreign = noneOfOurs && !names.every((k) => nearest(k, known) !== undefined);
  if (!foreign) throw unknownKey(unknown, known, `${noneOfOurs ? NONE_HINT : ''}; nothing was sent`);
  const shown = names.slice(0, 5).map((k) => echo(k, 20)).join(', ');
  throw inputError(
    `msg.payload has none of this node's keys (${known.join(', ')}) but ${shown}${names.length > 5 ? ', ...' : ''}${NONE_HINT}; nothing was sent`,
    'no key of this node',
  );
}

/**
 * A word of a short form or an action name, exactly one of `known` (spaces around allowed): a
 * word in another case or one slip away is refused with the right one offered, never applied.
 * `hint` follows the list of words when nothing is near (NONE_HINT where the word came as the
 * whole payload).
 */
export function exactWord<T extends string>(what: string, value: unknown, known: readonly T[], hint = ''): T {
  const wanted = typeof value === 'string' && value.length <= 64 ? value.trim() : undefined;
  const found = known.find((k) => k === wanted);
  if (found === undefined) {
    // A slip (`left` for Left) has the right word offered; the hint is for what is no word of ours.
    const slip = typeof value === 'string' && nearest(value.trim(), known) !== undefined;
    throw unknownWord(what, value, known, `use ${known.join(', ')}${slip ? '' : hint}`);
  }
  return found;
}
