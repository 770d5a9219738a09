/**
 * A plate event (ipcam-plate-event's msg.payload) as the dashboard widgets show it: time,
 * plate, list type, camera and crop. Only these go to a browser: never the sender's address or
 * the device's ip and mac, which the event carries.
 */
export interface PlateRow {
  time: string;
  plate: string;
  listType: string;
  camera: string;
  /** The plate crop as a data URL, when the event carried one (plate-event `images`). */
  crop?: string;
}

/** Longest crop passed to the browser (base64 characters). */
const CROP_MAX = 512 * 1024;
const LIST_TYPES = ['whiteList', 'blackList', 'temporaryList', 'strangerList', 'unknown'];

const textOf = (v: unknown, max: number): string => (typeof v === 'string' ? v.slice(0, max) : '');

export function plateRow(p: Record<string, unknown>): PlateRow {
  const device = typeof p['device'] === 'object' && p['device'] !== null ? (p['device'] as Record<string, unknown>) : {};
  const images = typeof p['images'] === 'object' && p['images'] !== null ? (p['images'] as Record<string, unknown>) : {};
  const listType = textOf(p['listType'], 32);
  const row: PlateRow = {
    time: textOf(p['time'], 40) || new Date().toISOString(),
    plate: textOf(p['plate'], 32),
    listType: LIST_TYPES.includes(listType) ? listType : 'unknown',
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
