/**
 * What an action node's `msg.payload` may hold: the `overrides` setting, and the one check every
 * node runs before anything is sent against the keys its spec names (nodes/<type>/spec.ts,
 * DESIGN's message table). A key nobody asked for is EINPUT naming it and the nearest known key,
 * never ignored: `{ "stat": "off" }` must not switch a relay on by its Mode setting.
 */
import { echo } from '../errors/echo';
import { inputError } from '../errors/errors';
import { nearest, unknownKey, unknownWord } from './suggest';
import { oneOf, withDefault } from './params';

/**
 * What a node declares of its payload (the part of its NodeSpec, lib/node-spec.ts, that this
 * check reads): its keys, and whether an `overrides` setting makes it a node whose payload only
 * overrides settings.
 */
export interface PayloadSpec {
  readonly settings: Readonly<Record<string, unknown>>;
  /** The keys an object `msg.payload` may hold; without them a payload object is not checked here. */
  readonly payloadKeys?: readonly string[];
  /** The keys of each item of a plate list (a list, or one item alone). */
  readonly payloadItemKeys?: readonly string[];
}

/**
 * The `overrides` setting of an action node: `payload` (also when absent) lets a payload command
 * the node, strictly; `none` runs the node exactly as set whatever the message (an event wired
 * straight into an action), its payload never read.
 */
export const OVERRIDES_VALUES = ['payload', 'none'] as const;
export type Overrides = (typeof OVERRIDES_VALUES)[number];
export const OVERRIDES = withDefault(oneOf(OVERRIDES_VALUES), 'payload');

/** The fields of a plate as flows give it (plate-add, plate-modify, plate-sync). */
export const PLATE_FIELDS = ['plate', 'group', 'owner', 'phone', 'begin', 'end'] as const;

/** A plain object (what JSON gives), not a list, Buffer, Date or Map: only those carry keys to check. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * The one reading of an object payload: a plain object's fields without the undefined or null
 * ones (those fall back to the node's settings, `{ group: null }` means the setting's group);
 * undefined for anything else (a list, Buffer, Date or Map is not the object form).
 */
export function payloadFields(value: unknown): Record<string, unknown> | undefined {
  return isPlainObject(value) ? Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined && v !== null)) : undefined;
}

/**
 * What the sender of a message the node cannot read may do instead: an Inject's timestamp, an
 * event or a sensor's reading wired into an action is the usual cause, not a misspelt command.
 */
export const NONE_HINT = "; to run the node as set whatever the message (an Inject's timestamp, an event), set its Overrides to none";

/**
 * Checks the keys of a payload for the node of `spec` before anything is sent: every key of an
 * object payload (and of each item of a plate list) must be one the spec names. A non-empty object
 * with none of them is refused naming the keys and the `overrides` setting (for a node that has
 * one): an event wired into an action is the usual cause. Payloads that are not objects keep their
 * meaning (short forms).
 */
export function checkPayloadKeys(spec: PayloadSpec, payload: unknown): void {
  const { payloadKeys, payloadItemKeys } = spec;
  // Overridable is the presence of the setting, never a list of its own to keep in step.
  if (payloadKeys !== undefined && isPlainObject(payload)) checkKeys(payload, payloadKeys, Object.hasOwn(spec.settings, 'overrides'));
  if (payloadItemKeys === undefined) return;
  // A longer list is refused whole by the operation (MAX_PLATES) before anything is sent.
  for (const item of Array.isArray(payload) ? payload : [payload]) if (isPlainObject(item)) checkKeys(item, payloadItemKeys, false);
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
