/**
 * The settings of an `ipcam-ha` node (DESIGN "Home Assistant over MQTT"): each rule once, here;
 * the node's spec (nodes/ipcam-ha/spec.ts) hands them to the editor and the node checks them at deploy.
 */
import { MAX_ID } from '../ops/io';
import { PLATE_GROUP } from '../ops/plate-input';
import { OUTPUT_MAX, RELAY_SETTINGS } from '../ops/relay';
import { idList, labelled, oneOf, optional, text, withDefault } from '../input/params';
import type { StoredSettings } from '../node-spec';
import { parseSettings } from '../settings';

/** Topic levels of letters, digits, `_` and `-`, separated by `/`: no wildcard, no empty level, nothing private. */
const TOPIC_ROOT = text({
  max: 64,
  pattern: /^[A-Za-z0-9_-]+(\/[A-Za-z0-9_-]+)*$/,
  patternText: 'topic levels of letters, digits, _ and -, separated by / (e.g. homeassistant)',
});

/** Outputs and inputs shown to Home Assistant: each entity is a component of one config, so a few suffice. */
export const HA_MAX_PORTS = 16;

export const HA_SNAPSHOT = ['none', 'plate'] as const;
export type HaSnapshot = (typeof HA_SNAPSHOT)[number];

export const HA_SETTINGS = {
  prefix: labelled(withDefault(TOPIC_ROOT, 'homeassistant'), 'Discovery prefix'),
  base: labelled(withDefault(TOPIC_ROOT, 'ipcam'), 'Base topic'),
  relays: labelled(optional(idList({ min: 1, max: OUTPUT_MAX, maxCount: HA_MAX_PORTS })), 'Relays'),
  pulse: labelled(withDefault(RELAY_SETTINGS.pulse, 500), 'Pulse (ms)'),
  inputs: labelled(optional(idList({ min: 1, max: MAX_ID, maxCount: HA_MAX_PORTS })), 'Inputs'),
  snapshot: labelled(withDefault(oneOf(HA_SNAPSHOT), 'none'), 'Picture'),
  plates: labelled(optional(PLATE_GROUP), 'Plate group'),
};

/** The checked settings. `server` says only whether plates are bridged: the node holds the listener. */
export interface HaSettings {
  prefix: string;
  base: string;
  relays: readonly number[];
  pulse: number;
  inputs: readonly number[];
  snapshot: HaSnapshot;
  /** The plate group Home Assistant may add to and delete from; undefined = none. */
  plates: string | undefined;
  /** An event server is set: plates become events. */
  server: boolean;
}

/** What a flow stores (strings, blanks, absent keys of an older flow). */
export interface HaSettingsInput extends StoredSettings {
  prefix?: unknown;
  base?: unknown;
  relays?: unknown;
  pulse?: unknown;
  inputs?: unknown;
  snapshot?: unknown;
  plates?: unknown;
  server?: unknown;
}

/**
 * The settings as the node runs them, parsed on deploy by the rules of its spec (parseSettings):
 * the EINPUT of the first bad one names it and its nearest valid value.
 */
export function haSettings(def: HaSettingsInput): HaSettings {
  const parsed = parseSettings(HA_SETTINGS, def);
  if (parsed.refused) throw parsed.refused;
  const s = parsed.settings;
  return {
    ...s,
    relays: [...(s.relays ?? [])].sort((a, b) => a - b),
    inputs: [...(s.inputs ?? [])].sort((a, b) => a - b),
    server: typeof def.server === 'string' && def.server.trim() !== '',
  };
}
