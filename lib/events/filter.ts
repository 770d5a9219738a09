import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { oneOf, optional, text, type Param } from '../input/params';
import { inputError } from '../errors/errors';
import { echo } from '../errors/echo';
import { PLATE_RULES } from '../ops/plate-input';
import { LIST_TYPES, type EventDevice, type ListType } from './parse';

/** One recorder group name of the `groups` setting: at most what a device stores as a plate group. */
export const GROUP_NAME_MAX = PLATE_RULES.group.max;
/** The `groups` setting: names separated by commas, blank = any group. */
export const GROUPS_SETTING = optional(
  text({
    max: 1024,
    pattern: new RegExp(`^\\s*[^,]{0,${GROUP_NAME_MAX}}(\\s*,\\s*[^,]{0,${GROUP_NAME_MAX}})*$`),
    patternText: `recorder group names separated by commas, e.g. Residents, Staff (each at most ${GROUP_NAME_MAX} characters)`,
  }),
);

/**
 * `'Residents, Staff'` or `['Residents']` to the set of group names a plate must be filed in
 * (compared without regard to case or surrounding spaces); empty = any group, plates without one
 * included.
 */
export function groupFilter(value: unknown): Set<string> | undefined {
  const text = Array.isArray(value) ? value.map(String).join(',') : String(value ?? '');
  GROUPS_SETTING.parse(text, 'Groups');
  const names = text
    .split(',')
    .map((v) => v.trim().toLowerCase())
    .filter((v) => v !== '');
  return names.length === 0 ? undefined : new Set(names);
}

/** Whether a plate passes a `groupFilter`: one without a group passes only an empty filter. */
export function inGroups(groups: ReadonlySet<string> | undefined, group: string | undefined): boolean {
  return groups === undefined || (group !== undefined && groups.has(group.trim().toLowerCase()));
}

/** `['whiteList']` or `'whiteList, unknown'` to a set; empty = every list type. */
export function listFilter(value: unknown): Set<ListType> | undefined {
  const entries = (Array.isArray(value) ? value : String(value ?? '').split(','))
    .map((v) => String(v).trim())
    .filter((v) => v !== '');
  if (entries.length === 0) return undefined;
  const unknown = entries.find((v) => !(LIST_TYPES as readonly string[]).includes(v));
  if (unknown) throw inputError(`Unknown list type ${echo(unknown)}: use ${LIST_TYPES.join(', ')}`);
  return new Set(entries as ListType[]);
}

/**
 * Case-insensitive text match against what the post says of its sender (mac, name, serial number,
 * ip) and the socket's address. The post's words are the sender's own claim: this is a convenience
 * to tell devices apart, never a guard (only the event server's allow list and Basic auth are).
 */
export function textMatcher(text: string): (device: EventDevice, remoteAddress: string) => boolean {
  // Made once per node: a blank text admits every post without looking at it.
  const needle = text.trim().toLowerCase();
  if (needle === '') return admitAll;
  return (device, remoteAddress) => [device.mac, device.name, device.sn, device.ip, remoteAddress].some((v) => v !== undefined && v.toLowerCase().includes(needle));
}

function admitAll(): boolean {
  return true;
}

/**
 * Which senders' posts a node takes: with a device `host`, those whose socket's address is the
 * device's (`fromDevice`; a host name is resolved once, and posts that arrive before that, right
 * after deploy, are dropped, as they cannot be told to come from the device); with a `match`
 * text, those whose words match it (`textMatcher`). Neither: every post.
 */
export function senderFilter(host: string | undefined, match = ''): (device: EventDevice, remoteAddress: string) => boolean {
  const matches = textMatcher(match);
  if (host === undefined) return matches;
  let addresses: Set<string> | undefined;
  void hostAddresses(host).then((a) => (addresses = a));
  return (device, remoteAddress) => addresses !== undefined && fromDevice(addresses, remoteAddress) && matches(device, remoteAddress);
}

/** The addresses a configured device host stands for (a name is resolved once), in canonical form. */
export async function hostAddresses(host: string): Promise<Set<string>> {
  const bare = host.replace(/^\[|\]$/g, '');
  if (isIP(bare)) return new Set([canonicalAddress(bare)]);
  try {
    const found = await lookup(bare, { all: true });
    return new Set(found.map((a) => canonicalAddress(a.address)));
  } catch {
    return new Set();
  }
}

/**
 * Whether a post came from the device: by the socket's address alone. The `<ip>` or `<mac>` a
 * post carries is whatever its sender wrote, so it never decides this.
 */
export function fromDevice(addresses: ReadonlySet<string>, remoteAddress: string): boolean {
  return isIP(remoteAddress) !== 0 && addresses.has(canonicalAddress(remoteAddress));
}

/** One spelling per address: IPv6 lower-case and compressed, IPv4-mapped IPv6 as IPv4. */
export function canonicalAddress(address: string): string {
  const family = isIP(address);
  if (family === 4) return address;
  if (family !== 6 || address.includes('%')) return address.toLowerCase();
  const canonical = new URL(`http://[${address}]/`).hostname.slice(1, -1);
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(canonical);
  if (mapped) return mapped[1] as string;
  // The URL form writes an IPv4-mapped address in hex: read it back as dotted IPv4.
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(canonical);
  if (hex) {
    const high = parseInt(hex[1] as string, 16);
    const low = parseInt(hex[2] as string, 16);
    return [high >> 8, high & 255, low >> 8, low & 255].join('.');
  }
  return canonical;
}

/**
 * The Lists setting of a plate-event node as the filter it is read into, on deploy: list types,
 * each one of LIST_TYPES (the dialog checks each entry by these limits); none, every list.
 */
export const LIST_FILTER: Param<Set<ListType> | undefined> = { limits: oneOf(LIST_TYPES).limits, parse: (value) => listFilter(value) };

/** The Groups setting of a plate-event node as the filter it is read into, on deploy (GROUPS_SETTING's rule). */
export const GROUP_FILTER: Param<Set<string> | undefined> = { limits: GROUPS_SETTING.limits, parse: (value) => groupFilter(value) };
