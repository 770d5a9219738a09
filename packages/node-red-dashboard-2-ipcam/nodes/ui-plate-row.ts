import { LIST_TYPES, type ListType } from 'node-red-contrib-ipcam/dist/lib/events/parse';

export type { ListType };

/**
 * A plate event (ipcam-plate-event's msg.payload) as the dashboard widgets show it: time,
 * plate, list type, camera and crop. Only these go to a browser: never the sender's address or
 * the device's ip and mac, which the event carries. The browser's code (ui/) takes these types
 * from here: they are the one statement of what the nodes send it.
 */
export interface PlateRow {
  time: string;
  plate: string;
  listType: ListType;
  camera: string;
  /** The plate crop as a data URL, when the event carried one (plate-event `images`). */
  crop?: string;
}

/** A row of the plates widget: with the id a click names. */
export type ShownPlateRow = PlateRow & { id: number };

/** What the plates widget sends a browser: the whole list when it starts watching, then each new row alone. */
export interface PlatesView {
  rows?: ShownPlateRow[];
  add?: ShownPlateRow;
  /** Rows the widget keeps (its Rows setting). */
  count: number;
}

/** Longest crop passed to the browser (base64 characters). */
const CROP_MAX = 512 * 1024;

const textOf = (v: unknown, max: number): string => (typeof v === 'string' ? v.slice(0, max) : '');

/** `event`: a plate event (plate-event's payload) as any wire may bring it: every field is checked. */
export function plateRow(event: object): PlateRow {
  const p = event as Record<string, unknown>;
  const device = typeof p['device'] === 'object' && p['device'] !== null ? (p['device'] as Record<string, unknown>) : {};
  const images = typeof p['images'] === 'object' && p['images'] !== null ? (p['images'] as Record<string, unknown>) : {};
  const listType = textOf(p['listType'], 32);
  const row: PlateRow = {
    time: textOf(p['time'], 40) || new Date().toISOString(),
    plate: textOf(p['plate'], 32),
    listType: (LIST_TYPES as readonly string[]).includes(listType) ? (listType as ListType) : 'unknown',
    camera: textOf(device['name'], 64),
  };
  const crop = images['plate'];
  const base64 = Buffer.isBuffer(crop) ? crop.toString('base64') : typeof crop === 'string' ? crop : '';
  if (base64 !== '' && base64.length <= CROP_MAX && /^[A-Za-z0-9+/]+={0,2}$/.test(base64)) {
    const type = base64.startsWith('iVBOR') ? 'image/png' : 'image/jpeg';
    row.crop = `data:${type};base64,${base64}`;
  }
  return row;
}
