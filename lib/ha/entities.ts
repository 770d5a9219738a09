/**
 * What Home Assistant sees of a camera: one table of entity kinds, from which the runtime builds
 * the discovery config and the editor (through the generated rules.js) lists the entities as the
 * settings stand. Written once, here.
 */
import type { HaSettings } from './settings';

export type HaPlatform = 'event' | 'sensor' | 'image' | 'switch' | 'button' | 'binary_sensor' | 'text';

/**
 * One kind of entity. `key` is its component id in `cmps` (`#` = the port), `name` its name in
 * Home Assistant (`#` = the port, `{plates}` = the plate group). `when`: settings it needs
 * (`true` = set, text = that value); `each`: one per port of that setting.
 */
export interface HaEntityKind {
  key: string;
  platform: HaPlatform;
  name: string;
  when?: Partial<Record<'server' | 'snapshot' | 'plates', true | string>>;
  each?: 'relays' | 'inputs';
}

export const HA_ENTITY_KINDS: readonly HaEntityKind[] = [
  { key: 'plate', platform: 'event', name: 'Plate', when: { server: true } },
  { key: 'last_plate', platform: 'sensor', name: 'Last plate', when: { server: true } },
  { key: 'picture', platform: 'image', name: 'Picture', when: { server: true, snapshot: 'plate' } },
  { key: 'relay_#', platform: 'switch', name: 'Relay #', each: 'relays' },
  { key: 'relay_#_pulse', platform: 'button', name: 'Pulse relay #', each: 'relays' },
  { key: 'input_#', platform: 'binary_sensor', name: 'Input #', each: 'inputs' },
  { key: 'plate_add', platform: 'text', name: 'Add plate to group {plates}', when: { plates: true } },
  { key: 'plate_delete', platform: 'text', name: 'Delete plate from group {plates}', when: { plates: true } },
];

/** One entity of a camera: its component id, platform, name and the port it stands for. */
export interface HaEntity {
  key: string;
  platform: HaPlatform;
  name: string;
  kind: HaEntityKind;
  port?: number;
}

function wanted(kind: HaEntityKind, s: HaSettings): boolean {
  const when = kind.when ?? {};
  if (when.server && !s.server) return false;
  if (when.snapshot !== undefined && s.snapshot !== when.snapshot) return false;
  if (when.plates && s.plates === undefined) return false;
  return true;
}

/** The entities the settings give, in the table's order. */
export function haEntities(s: HaSettings): HaEntity[] {
  const out: HaEntity[] = [];
  for (const kind of HA_ENTITY_KINDS) {
    if (!wanted(kind, s)) continue;
    const name = kind.name.replace('{plates}', s.plates ?? '');
    if (kind.each === undefined) {
      out.push({ key: kind.key, platform: kind.platform, name, kind });
      continue;
    }
    for (const port of s[kind.each]) out.push({ key: kind.key.replace('#', String(port)), platform: kind.platform, name: name.replace('#', String(port)), kind, port });
  }
  return out;
}

/** Each kind's key as a pattern: a port is 1 to 3 digits, as the settings allow. */
const KEY_PATTERNS: ReadonlyArray<{ pattern: RegExp; platform: HaPlatform }> = HA_ENTITY_KINDS.map((kind) => ({
  pattern: new RegExp(`^${kind.key.replace('#', '[1-9][0-9]{0,2}')}$`),
  platform: kind.platform,
}));

/**
 * The platform of a component id this package can have published, or undefined for any other:
 * what a retained config under our object id names is only believed for our own ids, and their
 * platform comes from the id, never from the config.
 */
export function platformOfKey(key: string): HaPlatform | undefined {
  if (key.length > 24) return undefined;
  return KEY_PATTERNS.find((k) => k.pattern.test(key))?.platform;
}
