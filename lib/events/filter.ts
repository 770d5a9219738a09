import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { EventDevice, ListType } from './parse';

export const LIST_TYPES: readonly ListType[] = ['whiteList', 'blackList', 'temporaryList', 'unknown'];

/** `['whiteList']` or `'whiteList, unknown'` to a set; empty = every list type. */
export function listFilter(value: unknown): Set<ListType> | undefined {
  const entries = (Array.isArray(value) ? value : String(value ?? '').split(','))
    .map((v) => String(v).trim())
    .filter((v) => v !== '');
  if (entries.length === 0) return undefined;
  const unknown = entries.find((v) => !LIST_TYPES.includes(v as ListType));
  if (unknown) throw new Error(`Unknown list type "${unknown}": use ${LIST_TYPES.join(', ')}`);
  return new Set(entries as ListType[]);
}

/** Case-insensitive text match against the sender's mac, name, serial number or ip. */
export function matchesText(device: EventDevice, remoteAddress: string, text: string): boolean {
  const needle = text.trim().toLowerCase();
  if (needle === '') return true;
  return [device.mac, device.name, device.sn, device.ip, remoteAddress].some((v) => v !== undefined && v.toLowerCase().includes(needle));
}

/** The addresses a configured device host stands for (a name is resolved once). */
export async function hostAddresses(host: string): Promise<Set<string>> {
  const bare = host.replace(/^\[|\]$/g, '');
  if (isIP(bare)) return new Set([bare.toLowerCase()]);
  try {
    const found = await lookup(bare, { all: true });
    return new Set([bare.toLowerCase(), ...found.map((a) => a.address.toLowerCase())]);
  } catch {
    return new Set([bare.toLowerCase()]);
  }
}

export function fromHost(addresses: Set<string>, device: EventDevice, remoteAddress: string): boolean {
  return addresses.has(remoteAddress.toLowerCase()) || addresses.has(device.ip.toLowerCase());
}
