/**
 * GetAlarmStatus (field notes): an `alarmStatusInfo` block of typed booleans. The same element
 * repeats with different `id` attributes, some have none, and lists carry an `itemType` child
 * before their `item`s (each with an `id`).
 */
import { IpcamError } from '../errors/errors';
import { child, items, type XmlElement } from '../xml/codec';

export const ALARM_STATUS_PATH = '/GetAlarmStatus';
/** Most alarms read from one answer, and how deep blocks are followed. */
export const ALARM_MAX = 1024;
const DEPTH_MAX = 4;

export interface AlarmState {
  /** The element's name, e.g. `motionAlarm`, `sensorAlarmIn`. */
  alarm: string;
  /** Its `id` (a number where it is digits), or null where the device gives none. */
  id: number | string | null;
  active: boolean;
}

function idOf(el: XmlElement): number | string | null {
  const id = el.attrs['id'];
  if (id === undefined) return null;
  const trimmed = id.trim().slice(0, 64);
  return /^\d{1,9}$/.test(trimmed) ? Number(trimmed) : trimmed;
}

function flag(el: XmlElement): boolean | undefined {
  const t = el.text.trim().toLowerCase();
  return t === 'true' ? true : t === 'false' ? false : undefined;
}

/** One entry per boolean element or list item, in document order; other values are skipped. */
export function parseAlarmStatus(root: XmlElement): AlarmState[] {
  const block = child(root, 'alarmStatusInfo') ?? (root.name === 'alarmStatusInfo' ? root : undefined);
  if (!block) throw new IpcamError('EPARSE', 'GetAlarmStatus answered no alarmStatusInfo block');
  const out: AlarmState[] = [];
  const walk = (el: XmlElement, depth: number): void => {
    for (const c of el.children) {
      if (out.length >= ALARM_MAX) return;
      const list = c.attrs['type'] === 'list' || items(c).length > 0;
      if (list) {
        for (const item of items(c)) {
          const active = flag(item);
          if (active !== undefined && out.length < ALARM_MAX) out.push({ alarm: c.name, id: idOf(item), active });
        }
      } else if (c.children.length === 0) {
        const active = flag(c);
        if (active !== undefined) out.push({ alarm: c.name, id: idOf(c), active });
      } else if (depth < DEPTH_MAX) {
        walk(c, depth + 1);
      }
    }
  };
  walk(block, 1);
  return out;
}
