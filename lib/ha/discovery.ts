/**
 * Home Assistant's device-based MQTT discovery: one retained config per camera on
 * `<prefix>/device/<object id>/config` with `dev`, `o`, availability and `cmps`, in the
 * abbreviations Home Assistant documents (`p`, `uniq_id`, `stat_t`, `cmd_t`, `evt_typ`, `img_t`...).
 */
import { LIST_TYPES } from '../events/parse';
import { PLATE_RULES } from '../ops/plate-input';
import { haEntities, platformOfKey, type HaEntity, type HaPlatform } from './entities';
import type { HaSettings } from './settings';
import type { HaTopics } from './topics';

/** The payloads of the switch, button and binary sensor: Home Assistant's defaults, written out. */
export const HA_ON = 'ON';
export const HA_OFF = 'OFF';
export const HA_PRESS = 'PRESS';
/** The availability payloads (Home Assistant's defaults). */
export const HA_ONLINE = 'online';
export const HA_OFFLINE = 'offline';

/** What the config says of the camera: never its address, user or serial number. */
export interface HaDeviceInfo {
  name: string;
  model?: string;
  firmware?: string;
}

/** Who publishes the config (`o`): this package and its version. */
export interface HaOrigin {
  name: string;
  sw: string;
}

type Component = Record<string, unknown>;

function component(e: HaEntity, t: HaTopics): Component {
  const base = { p: e.platform, uniq_id: `${t.objectId}_${e.key}`, name: e.name };
  switch (e.platform) {
    case 'event':
      return { ...base, stat_t: t.state(e.key), evt_typ: [...LIST_TYPES], ic: 'mdi:car' };
    case 'sensor':
      return { ...base, stat_t: t.state(e.key), ic: 'mdi:card-text-outline' };
    case 'image':
      return { ...base, img_t: t.state(e.key), cont_type: 'image/jpeg' };
    case 'switch':
      return { ...base, cmd_t: t.command(e.key), stat_t: t.state(e.key), pl_on: HA_ON, pl_off: HA_OFF };
    case 'button':
      return { ...base, cmd_t: t.command(e.key), pl_prs: HA_PRESS };
    case 'binary_sensor':
      return { ...base, stat_t: t.state(e.key), pl_on: HA_ON, pl_off: HA_OFF };
    case 'text':
      return { ...base, cmd_t: t.command(e.key), min: 1, max: PLATE_RULES.plate.max, ic: e.key === 'plate_add' ? 'mdi:playlist-plus' : 'mdi:playlist-remove' };
  }
}

/** Platforms whose state is retained at the broker under the component's topic (cleared when the component goes). */
export const RETAINED_PLATFORMS: ReadonlySet<HaPlatform> = new Set(['sensor', 'switch', 'binary_sensor']);

/**
 * The config of one camera. `dropped`: components a narrowed setting removed, each published as
 * its platform alone (`{ "p": "switch" }`), which is how Home Assistant removes one component of
 * a device config.
 */
export function discoveryConfig(s: HaSettings, t: HaTopics, device: HaDeviceInfo, origin: HaOrigin, dropped: ReadonlyMap<string, HaPlatform> = new Map()): Record<string, unknown> {
  const cmps: Record<string, Component> = {};
  for (const e of haEntities(s)) cmps[e.key] = component(e, t);
  for (const [key, platform] of dropped) if (!(key in cmps)) cmps[key] = { p: platform };
  const dev: Record<string, unknown> = { ids: [t.objectId], name: device.name };
  if (device.model !== undefined) dev['mdl'] = device.model;
  if (device.firmware !== undefined) dev['sw'] = device.firmware;
  return {
    dev,
    o: { name: origin.name, sw: origin.sw },
    avty: [{ t: t.bridge }, { t: t.camera }],
    avty_mode: 'all',
    qos: 1,
    cmps,
  };
}

/** A retained config read back larger than this is not read (ours are a few kB). */
export const MAX_CONFIG_BYTES = 64 * 1024;
/** Components read back at most (ours: 8 + 2 x 16 relays + 16 inputs). */
const MAX_COMPONENTS_READ = 128;

/**
 * What a retained config under our object id holds of our own components: each id this package
 * can publish, `live` (a full component) or `removed` (its platform alone: removed already).
 * Anything else in it (another writer's ids, platforms, sizes) is not believed.
 */
export function componentsOf(payload: Buffer): Map<string, 'live' | 'removed'> {
  const out = new Map<string, 'live' | 'removed'>();
  if (payload.length === 0 || payload.length > MAX_CONFIG_BYTES) return out;
  let parsed: unknown;
  try {
    parsed = JSON.parse(payload.toString('utf8'));
  } catch {
    return out;
  }
  const cmps = typeof parsed === 'object' && parsed !== null ? ((parsed as Record<string, unknown>)['cmps'] ?? (parsed as Record<string, unknown>)['components']) : undefined;
  if (typeof cmps !== 'object' || cmps === null || Array.isArray(cmps)) return out;
  for (const [key, value] of Object.entries(cmps).slice(0, MAX_COMPONENTS_READ)) {
    if (platformOfKey(key) === undefined || typeof value !== 'object' || value === null) continue;
    out.set(key, Object.keys(value).length <= 1 ? 'removed' : 'live');
  }
  return out;
}

/**
 * The components to publish as removed: those live in what was published before and not given
 * by the settings now. One already removed is left out, as Home Assistant asks once it is gone.
 */
export function droppedComponents(before: ReadonlyMap<string, 'live' | 'removed'>, s: HaSettings): Map<string, HaPlatform> {
  const now = new Set(haEntities(s).map((e) => e.key));
  const out = new Map<string, HaPlatform>();
  for (const [key, state] of before) {
    const platform = platformOfKey(key);
    if (state === 'live' && platform !== undefined && !now.has(key)) out.set(key, platform);
  }
  return out;
}
