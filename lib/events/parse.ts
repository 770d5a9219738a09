import { IpcamError } from '../errors';
import { child, items, parseXml, toTyped, type XmlElement, type XmlValue } from '../xml/codec';

/** Who posted: from the document where it says, else the sender's address. */
export interface EventDevice {
  name?: string;
  mac?: string;
  sn?: string;
  ip: string;
}

export type ListType = 'whiteList' | 'blackList' | 'temporaryList' | 'unknown';

export interface PlateDetection {
  kind: 'plate';
  plate: string;
  listType: ListType;
  direction?: string;
  /** Percent. */
  confidence?: number;
  channel?: number;
  /** ISO 8601. */
  time: string;
  device: EventDevice;
  vehicle?: { color?: string; type?: string; brand?: string; model?: string };
  /** Base64 text as posted; may be a placeholder, decode with `decodeImage`. */
  images: { plate?: string; scene?: string };
}

export interface KeepAlive {
  kind: 'keepalive';
  device: EventDevice;
  time: string;
}

export interface AlarmStatus {
  kind: 'alarmStatus';
  time: string;
  channel?: number;
  device: EventDevice;
  alarms: Array<{ type: string; id?: number; active: boolean }>;
}

/** Any other smart event (intrusion, line crossing, face, counting, metadata). */
export interface OtherEvent {
  kind: 'event';
  type: string;
  time: string;
  channel?: number;
  device: EventDevice;
  data: XmlValue;
}

export type DevicePost = PlateDetection | KeepAlive | AlarmStatus | OtherEvent;

const LIST_TYPES = new Set(['whiteList', 'blackList', 'temporaryList']);
const BLOB_MARK = '@ipcam-blob:';

/**
 * Parses one device post into what it reports; a post may carry several plates. Image data is
 * cut out before XML parsing (bodies run to 500 KB and more), so parsing costs what the small
 * document around it costs.
 */
export function parseDevicePost(body: Buffer | string, senderIp: string, receivedAt = Date.now()): DevicePost[] {
  const { xmlText, blobs } = extractImages(stripPreamble(typeof body === 'string' ? body : body.toString('utf8')));
  const root = parseXml(xmlText);
  const device = deviceOf(root, senderIp);
  const time = timeOf(root, receivedAt);
  const blob = (el: XmlElement | undefined): string | undefined => {
    const text = el?.text;
    if (text === undefined || !text.startsWith(BLOB_MARK)) return text === '' ? undefined : text;
    return blobs[Number(text.slice(BLOB_MARK.length))];
  };

  if (root.name.toLowerCase() === 'deviceinfo' || textOf(root, 'messageType') === 'keepalive') {
    return [{ kind: 'keepalive', device, time }];
  }
  const channel = channelOf(root);
  const alarmInfo = child(root, 'alarmStatusInfo');
  if (alarmInfo) return [{ kind: 'alarmStatus', time, ...(channel !== undefined && { channel }), device, alarms: alarmsOf(alarmInfo) }];

  const smartType = textOf(root, 'smartType') ?? '';
  if (/^vehic(l)?e$/i.test(smartType)) {
    const plates = child(root, 'licensePlateListInfo') ? recorderPlates(root, blob) : cameraPlates(root, blob);
    return plates.map((p) => ({ kind: 'plate', ...p, time, device, ...(p.channel === undefined && channel !== undefined && { channel }) }));
  }
  if (smartType === '' && !child(root, 'messageType')) throw new IpcamError('EPARSE', `Unknown post: root <${root.name}> without smartType or messageType`);
  return [{ kind: 'event', type: smartType || (textOf(root, 'messageType') as string), time, ...(channel !== undefined && { channel }), device, data: withoutImages(toTyped(root)) }];
}

type PlateFields = Omit<PlateDetection, 'kind' | 'time' | 'device'>;
type BlobReader = (el: XmlElement | undefined) => string | undefined;

/** Camera format: `listInfo/item/plateNumber`; the first item is often an overview without plate. */
function cameraPlates(root: XmlElement, blob: BlobReader): PlateFields[] {
  const scene = blob(find(root, 'sourceBase64Data'));
  const entries = items(child(root, 'listInfo'));
  const overview = entries.find((item) => !textOf(item, 'plateNumber'));
  const overviewImage = blob(find(overview, 'targetBase64Data'));
  return entries
    .filter((item) => textOf(item, 'plateNumber'))
    .map((item) => {
      const carAttr = find(item, 'carAttr') ?? find(root, 'carAttr');
      return plateFields({
        plate: textOf(item, 'plateNumber') as string,
        list: textOf(item, 'vehicleListType'),
        direction: textOf(item, 'vehicleDirect') ?? textOf(root, 'vehicleDirect'),
        confidence: find(item, 'PlateConfidence') ?? find(root, 'PlateConfidence'),
        channel: textOf(item, 'channelId') ?? textOf(root, 'channelId'),
        vehicle: carAttr,
        plateImage: blob(find(item, 'targetBase64Data')),
        scene: scene ?? overviewImage,
      });
    });
}

/** Recorder format: `licensePlateListInfo/item/licensePlateAttribute/licensePlateNumber`. */
function recorderPlates(root: XmlElement, blob: BlobReader): PlateFields[] {
  const scene = blob(find(root, 'sourceBase64Data'));
  return items(child(root, 'licensePlateListInfo'))
    .filter((item) => find(item, 'licensePlateNumber')?.text)
    .map((item) =>
      plateFields({
        plate: find(item, 'licensePlateNumber')?.text as string,
        list: textOf(item, 'vehicleListType') ?? find(item, 'vehicleListType')?.text,
        direction: find(item, 'vehicleDirect')?.text ?? find(item, 'direction')?.text,
        confidence: find(item, 'PlateConfidence') ?? find(item, 'confidence'),
        channel: undefined,
        vehicle: child(item, 'carAttribute'),
        plateImage: blob(find(item, 'targetBase64Data')),
        scene,
      }),
    );
}

interface RawPlate {
  plate: string;
  list: string | undefined;
  direction: string | undefined;
  confidence: XmlElement | undefined;
  channel: string | undefined;
  vehicle: XmlElement | undefined;
  plateImage: string | undefined;
  scene: string | undefined;
}

function plateFields(raw: RawPlate): PlateFields {
  const out: PlateFields = { plate: raw.plate, listType: LIST_TYPES.has(raw.list ?? '') ? (raw.list as ListType) : 'unknown', images: {} };
  if (raw.direction) out.direction = raw.direction;
  const confidence = confidenceOf(raw.confidence);
  if (confidence !== undefined) out.confidence = confidence;
  const channel = raw.channel === undefined ? undefined : Number(raw.channel);
  if (channel !== undefined && Number.isInteger(channel)) out.channel = channel;
  const vehicle = vehicleOf(raw.vehicle);
  if (vehicle) out.vehicle = vehicle;
  if (raw.plateImage) out.images.plate = raw.plateImage;
  if (raw.scene) out.images.scene = raw.scene;
  return out;
}

/** `PlateConfidence count="9900"` (hundredths of a percent), or a plain number (percent or 0-1). */
function confidenceOf(el: XmlElement | undefined): number | undefined {
  if (!el) return undefined;
  const hundredths = Number(el.attrs['count']);
  if (el.attrs['count'] !== undefined && Number.isFinite(hundredths)) return hundredths / 100;
  const value = Number(el.text);
  if (el.text === '' || !Number.isFinite(value)) return undefined;
  if (value > 100) return value / 100;
  return value <= 1 ? value * 100 : value;
}

function vehicleOf(el: XmlElement | undefined): PlateDetection['vehicle'] | undefined {
  if (!el) return undefined;
  const pick = (...names: string[]): string | undefined => names.map((n) => textOf(el, n)).find((v) => v !== undefined && v !== '');
  const vehicle = { color: pick('color', 'carColor'), type: pick('carType', 'type', 'vehicleType'), brand: pick('brand', 'carBrand'), model: pick('model', 'carModel') };
  const present = Object.entries(vehicle).filter(([, v]) => v !== undefined);
  return present.length > 0 ? (Object.fromEntries(present) as PlateDetection['vehicle']) : undefined;
}

function alarmsOf(info: XmlElement): AlarmStatus['alarms'] {
  const alarms: AlarmStatus['alarms'] = [];
  for (const alarm of info.children) {
    const entries = alarm.children.length > 0 ? alarm.children : [alarm];
    for (const entry of entries) {
      const id = Number(entry.attrs['id']);
      alarms.push({ type: alarm.name, ...(Number.isInteger(id) && { id }), active: entry.text === 'true' });
    }
  }
  return alarms;
}

function deviceOf(root: XmlElement, senderIp: string): EventDevice {
  const info = child(root, 'deviceInfo') ?? (root.name === 'DeviceInfo' ? root : undefined);
  const read = (...names: string[]): string | undefined => {
    for (const scope of [info, root]) {
      for (const name of names) {
        const value = childCI(scope, name)?.text;
        if (value) return value;
      }
    }
    return undefined;
  };
  const device: EventDevice = { ip: read('ip', 'ipAddress') ?? senderIp };
  const name = read('deviceName');
  const mac = read('mac', 'macAddress');
  const sn = read('sn');
  if (name) device.name = name;
  if (mac) device.mac = mac;
  if (sn) device.sn = sn;
  return device;
}

function channelOf(root: XmlElement): number | undefined {
  const text = textOf(child(root, 'deviceInfo'), 'channelId') ?? textOf(root, 'channelId');
  const n = Number(text);
  return text !== undefined && Number.isInteger(n) ? n : undefined;
}

/** Epoch in micro-, milli- or seconds (`currentTime`), or `dataTime` as `MM-DD-YYYY hh:mm:ss AM`. */
export function timeOf(root: XmlElement, fallback: number): string {
  const epoch = textOf(root, 'currentTime');
  if (epoch && /^\d+$/.test(epoch)) {
    const n = Number(epoch);
    const ms = n >= 1e14 ? n / 1000 : n >= 1e11 ? n : n * 1000;
    return new Date(Math.floor(ms)).toISOString();
  }
  const formatted = textOf(root, 'dataTime') ?? textOf(root, 'dateTime');
  const parsed = formatted ? parseDeviceDate(formatted) : undefined;
  return new Date(parsed ?? fallback).toISOString();
}

/** Device-local time without a zone, read in this host's zone (devices and hosts share one site). */
function parseDeviceDate(text: string): number | undefined {
  const us = /^(\d{1,2})-(\d{1,2})-(\d{4})[ T](\d{1,2}):(\d{2}):(\d{2})(?:\s*([AP]M))?$/i.exec(text.trim());
  const iso = /^(\d{4})-(\d{1,2})-(\d{1,2})[ T](\d{1,2}):(\d{2}):(\d{2})$/.exec(text.trim());
  let parts: number[];
  if (us) {
    let hour = Number(us[4]);
    const meridiem = us[7]?.toUpperCase();
    if (meridiem === 'PM' && hour < 12) hour += 12;
    if (meridiem === 'AM' && hour === 12) hour = 0;
    parts = [Number(us[3]), Number(us[1]), Number(us[2]), hour, Number(us[5]), Number(us[6])];
  } else if (iso) {
    parts = iso.slice(1).map(Number);
  } else {
    return undefined;
  }
  const [y, mo, d, h, mi, s] = parts as [number, number, number, number, number, number];
  const date = new Date(y, mo - 1, d, h, mi, s);
  return Number.isNaN(date.getTime()) ? undefined : date.getTime();
}

function textOf(el: XmlElement | undefined, name: string): string | undefined {
  return child(el, name)?.text;
}

function childCI(el: XmlElement | undefined, name: string): XmlElement | undefined {
  const lower = name.toLowerCase();
  return el?.children.find((c) => c.name.toLowerCase() === lower);
}

/** Depth-first search for the first element of that name. */
function find(el: XmlElement | undefined, name: string): XmlElement | undefined {
  if (!el) return undefined;
  for (const c of el.children) {
    if (c.name === name) return c;
    const deeper = find(c, name);
    if (deeper) return deeper;
  }
  return undefined;
}

/** Some cameras put raw base64 between the XML declaration and the root: skip to the root. */
function stripPreamble(text: string): string {
  let start = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  if (text.startsWith('<?xml', start)) {
    const end = text.indexOf('?>', start);
    if (end < 0) throw new IpcamError('EPARSE', 'Unterminated XML declaration');
    start = end + 2;
  }
  // Skip anything up to the first element (or comment) start.
  const root = text.indexOf('<', start);
  if (root < 0) throw new IpcamError('EPARSE', 'The post holds no XML element');
  return text.slice(root);
}

// A self-closed element (`<targetBase64Data type="string"/>`, no image) is not an opening tag.
/** Opening tags of image elements (`targetBase64Data`, `sourceBase64Data`, ...); self-closed ones are skipped. */
const IMAGE_OPENER = /<(\w*Base64Data)(\s[^>]*)?>/g;

/**
 * Cuts the base64 image data out of the text, leaving a marker the parser reads as plain text.
 * The content is found with indexOf, not a regular expression: it runs to hundreds of kilobytes.
 */
function extractImages(text: string): { xmlText: string; blobs: string[] } {
  const blobs: string[] = [];
  const parts: string[] = [];
  let copied = 0;
  IMAGE_OPENER.lastIndex = 0;
  for (let m = IMAGE_OPENER.exec(text); m; m = IMAGE_OPENER.exec(text)) {
    if (m[0].endsWith('/>')) continue;
    const start = m.index + m[0].length;
    const end = text.indexOf(`</${m[1] as string}>`, start);
    if (end < 0) break;
    blobs.push(unwrapCdata(text.slice(start, end)));
    parts.push(text.slice(copied, start), `${BLOB_MARK}${blobs.length - 1}`);
    copied = end;
    IMAGE_OPENER.lastIndex = end;
  }
  if (blobs.length === 0) return { xmlText: text, blobs };
  parts.push(text.slice(copied));
  return { xmlText: parts.join(''), blobs };
}

function unwrapCdata(content: string): string {
  const trimmed = content.trim();
  return trimmed.startsWith('<![CDATA[') && trimmed.endsWith(']]>') ? trimmed.slice(9, -3).trim() : trimmed;
}

/** Event data for flows: image fields dropped (they are large; plate events carry them decoded). */
function withoutImages(value: XmlValue): XmlValue {
  if (Array.isArray(value)) return value.map(withoutImages);
  if (typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).filter(([k]) => !k.endsWith('Base64Data')).map(([k, v]) => [k, withoutImages(v)]));
}

/** Decodes posted base64 to an image, or undefined for placeholder text that is not one. */
export function decodeImage(base64: string | undefined): Buffer | undefined {
  if (!base64 || !/^[A-Za-z0-9+/=\s]+$/.test(base64)) return undefined;
  const bytes = Buffer.from(base64, 'base64');
  const jpeg = bytes.length > 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff;
  const png = bytes.length > 8 && bytes.readUInt32BE(0) === 0x89504e47;
  return jpeg || png ? bytes : undefined;
}
