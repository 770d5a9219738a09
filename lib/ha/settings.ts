/**
 * The settings of an `ipcam-ha` node (DESIGN "Home Assistant over MQTT"): each rule once, here;
 * the node's spec (nodes/ipcam-ha/spec.ts) hands them to the editor and the node checks them at deploy.
 */
import { MAX_ID } from '../ops/io';
import { PLATE_GROUP } from '../ops/plate-input';
import { OUTPUT_MAX, RELAY_SETTINGS } from '../ops/relay';
import { idList, oneOf, optional, text, withDefault } from '../input/params';

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
  prefix: withDefault(TOPIC_ROOT, 'homeassistant'),
  base: withDefault(TOPIC_ROOT, 'ipcam'),
  relays: optional(idList({ min: 1, max: OUTPUT_MAX, maxCount: HA_MAX_PORTS })),
  pulse: withDefault(RELAY_SETTINGS.pulse, 500),
  inputs: optional(idList({ min: 1, max: MAX_ID, maxCount: HA_MAX_PORTS })),
  snapshot: withDefault(oneOf(HA_SNAPSHOT), 'none'),
  plates: optional(PLATE_GROUP),
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
export interface HaSettingsInput {
  prefix?: unknown;
  base?: unknown;
  relays?: unknown;
  pulse?: unknown;
  inputs?: unknown;
  snapshot?: unknown;
  plates?: unknown;
  server?: unknown;
}

/** The settings as the node runs them; the EINPUT of the first bad one (its field's label). */
export function haSettings(def: HaSettingsInput): HaSettings {
  return {
    prefix: HA_SETTINGS.prefix.parse(def.prefix, 'Discovery prefix'),
    base: HA_SETTINGS.base.parse(def.base, 'Base topic'),
    relays: [...(HA_SETTINGS.relays.parse(def.relays, 'Relays') ?? [])].sort((a, b) => a - b),
    pulse: HA_SETTINGS.pulse.parse(def.pulse, 'Pulse (ms)'),
    inputs: [...(HA_SETTINGS.inputs.parse(def.inputs, 'Inputs') ?? [])].sort((a, b) => a - b),
    snapshot: HA_SETTINGS.snapshot.parse(def.snapshot, 'Picture'),
    plates: HA_SETTINGS.plates.parse(def.plates, 'Plate group'),
    server: typeof def.server === 'string' && def.server.trim() !== '',
  };
}
