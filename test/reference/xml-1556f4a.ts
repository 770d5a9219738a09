/**
 * The parse path as it was before issue 13 (commit 1556f4a): `parseXml` of lib/xml/codec.ts
 * (fast-xml-parser's validator, then its parser, then the conversion to XmlElement) and
 * lib/events/parse.ts, copied as they were. Only the exports are renamed (`...Before`), and the
 * types are taken from lib/. The "before" baseline of bench/xml.ts; its parser is the reference
 * of the differential test in test/xml-well-formed.test.ts.
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { IpcamError } from '../../lib/errors/errors';
import { PARSE_LIMITS, PostTooComplex, type AlarmStatus, type DevicePost, type EventDevice, type ListType, type ParseLimits, type PlateDetection, type ReadPost } from '../../lib/events/parse';
import { child, items, toTyped, type XmlElement, type XmlValue } from '../../lib/xml/codec';

// ---------------------------------------------------------------------------------------------
// lib/xml/codec.ts: parseXml

const TEXT = '#text';
const CDATA = '#cdata';
const ATTRS = ':@';

export const parserBefore = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: '',
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
  cdataPropName: CDATA,
  processEntities: true,
  // Also decodes numeric character references (`&#228;`), which XML requires; the parser only
  // does that together with a few HTML names (`&nbsp;`), which is harmless leniency.
  htmlEntities: true,
  ignoreDeclaration: true,
  ignorePiTags: true,
  commentPropName: false,
});

type OrderedNode = Record<string, unknown>;

/** Parses a device answer to its root element. No DTD, no entities beyond the five of XML. */
export function parseXmlBefore(input: string | Buffer): XmlElement {
  const text = (typeof input === 'string' ? input : input.toString('utf8')).replace(/^\uFEFF/, '').trimStart();
  if (/<!DOCTYPE|<!ENTITY/i.test(text)) throw new IpcamError('EPARSE', 'The answer carries a DTD, which is refused');
  // The parser closes unbalanced tags silently: a truncated answer would read as a shorter one.
  // The validator's and parser's own messages quote the answer: only its code and line are shown.
  const valid = XMLValidator.validate(text);
  if (valid !== true) throw new IpcamError('EPARSE', `The answer is not well-formed XML (${/^[A-Za-z]{1,40}$/.test(valid.err.code) ? `${valid.err.code}, ` : ''}line ${Number(valid.err.line) || '?'})`);
  let nodes: OrderedNode[];
  try {
    nodes = parserBefore.parse(text) as OrderedNode[];
  } catch {
    throw new IpcamError('EPARSE', 'The answer is not well-formed XML');
  }
  const root = nodes.map(toElement).find((el): el is XmlElement => el !== undefined);
  if (!root) throw new IpcamError('EPARSE', 'The answer holds no XML element');
  return root;
}

function toElement(node: OrderedNode): XmlElement | undefined {
  const name = Object.keys(node).find((key) => key !== ATTRS && key !== TEXT && key !== CDATA);
  if (name === undefined) return undefined;
  const element: XmlElement = { name, attrs: { ...(node[ATTRS] as Record<string, string> | undefined) }, children: [], text: '' };
  const pieces: Array<{ text: string; cdata: boolean }> = [];
  for (const part of node[name] as OrderedNode[]) {
    if (TEXT in part) pieces.push({ text: String(part[TEXT]), cdata: false });
    else if (CDATA in part) pieces.push({ text: (part[CDATA] as OrderedNode[]).map((t) => String(t[TEXT] ?? '')).join(''), cdata: true });
    else {
      const child = toElement(part);
      if (child) element.children.push(child);
    }
  }
  element.text = joinText(pieces);
  return element;
}

/**
 * Field notes: CDATA may be wrapped in whitespace and newlines. That wrapping is trimmed; what is
 * inside a CDATA section is the value as sent, kept exactly.
 */
function joinText(pieces: Array<{ text: string; cdata: boolean }>): string {
  const first = pieces.findIndex((p) => p.cdata);
  if (first < 0) return pieces.map((p) => p.text).join('').trim();
  const last = pieces.findLastIndex((p) => p.cdata);
  const join = (from: number, to: number): string => pieces.slice(from, to).map((p) => p.text).join('');
  return join(0, first).trimStart() + join(first, last + 1) + join(last + 1, pieces.length).trimEnd();
}

// ---------------------------------------------------------------------------------------------
// lib/events/parse.ts

const LIST_TYPES = new Set(['whiteList', 'blackList', 'temporaryList']);
const BLOB_MARK = '@ipcam-blob:';

/**
 * Parses one device post into what it reports; a post may carry several plates. Image data is
 * cut out before XML parsing (bodies run to 500 KB and more), so parsing costs what the small
 * document around it costs. Throws EPARSE when unreadable, `PostTooComplex` over a limit.
 */
export function parseDevicePostBefore(body: Buffer | string, senderIp: string, receivedAt = Date.now(), limits: Partial<ParseLimits> = {}): DevicePost[] {
  return readDevicePost(body, senderIp, receivedAt, limits).posts;
}

/** The XML text `readDevicePost` hands to the XML parser: preamble skipped, image data cut out. */
export function xmlTextBefore(body: Buffer | string): string {
  return extractImages(stripPreamble(typeof body === 'string' ? body : body.toString('utf8'))).xmlText;
}

/** `parseDevicePost` that also says how many plate items the item cap skipped. Linear in the body size. */
function readDevicePost(body: Buffer | string, senderIp: string, receivedAt = Date.now(), limits: Partial<ParseLimits> = {}): ReadPost {
  const bounds: ParseLimits = { ...PARSE_LIMITS, ...limits };
  const { xmlText, blobs } = extractImages(stripPreamble(typeof body === 'string' ? body : body.toString('utf8')));
  checkSize(xmlText, bounds);
  const root = parseXmlBefore(xmlText);
  const device = deviceOf(root, senderIp);
  const time = timeOf(root, receivedAt);
  const blob = (el: XmlElement | undefined): string | undefined => {
    const text = el?.text;
    if (text === undefined || !text.startsWith(BLOB_MARK)) return text === '' ? undefined : text;
    return blobs[Number(text.slice(BLOB_MARK.length))];
  };
  const one = (post: DevicePost): ReadPost => ({ posts: [post], ignoredItems: 0 });

  if (root.name.toLowerCase() === 'deviceinfo' || textOf(root, 'messageType') === 'keepalive') {
    return one({ kind: 'keepalive', device, time });
  }
  const channel = channelOf(root);
  const alarmInfo = child(root, 'alarmStatusInfo');
  if (alarmInfo) return one({ kind: 'alarmStatus', time, ...(channel !== undefined && { channel }), device, alarms: alarmsOf(alarmInfo) });

  const smartType = textOf(root, 'smartType') ?? '';
  if (/^vehic(l)?e$/i.test(smartType)) {
    const { plates, ignored } = child(root, 'licensePlateListInfo') ? recorderPlates(root, blob, bounds.maxItems) : cameraPlates(root, blob, bounds.maxItems);
    const posts = plates.map((p): DevicePost => ({ kind: 'plate', ...p, time, device, ...(p.channel === undefined && channel !== undefined && { channel }) }));
    return { posts, ignoredItems: ignored };
  }
  if (smartType === '' && !child(root, 'messageType')) throw new IpcamError('EPARSE', `Unknown post: root <${root.name.slice(0, 64)}> without smartType or messageType`);
  return one({ kind: 'event', type: smartType || (textOf(root, 'messageType') as string), time, ...(channel !== undefined && { channel }), device, data: withoutImages(toTyped(root)) });
}

/**
 * The XML parser's cost grows with the markup and with every element, attribute and character
 * reference (each `<` that opens something, each `=`, each `&`): bounded here by one scan, before
 * it builds anything.
 */
function checkSize(xmlText: string, limits: ParseLimits): void {
  if (xmlText.length > limits.maxMarkup) throw new PostTooComplex(`Too large: ${xmlText.length} characters of XML besides the images, more than ${limits.maxMarkup}`);
  let nodes = 0;
  for (let i = 0; i < xmlText.length; i++) {
    const c = xmlText.charCodeAt(i);
    if ((c === 0x3c /* < */ && xmlText.charCodeAt(i + 1) !== 0x2f) /* not </ */ || c === 0x3d /* = */ || c === 0x26 /* & */) {
      if (++nodes > limits.maxNodes) throw new PostTooComplex(`Too complex: more than ${limits.maxNodes} elements, attributes and references`);
    }
  }
}

type PlateFields = Omit<PlateDetection, 'kind' | 'time' | 'device'>;
type BlobReader = (el: XmlElement | undefined) => string | undefined;
interface Plates {
  plates: PlateFields[];
  ignored: number;
}

/** The first `max` items that hold a plate, and how many more there were. */
function plateItems(entries: XmlElement[], hasPlate: (item: XmlElement) => boolean, max: number): { kept: XmlElement[]; ignored: number } {
  const kept: XmlElement[] = [];
  let ignored = 0;
  for (const item of entries) {
    if (!hasPlate(item)) continue;
    if (kept.length < max) kept.push(item);
    else ignored += 1;
  }
  return { kept, ignored };
}

/**
 * Camera format: `listInfo/item/plateNumber`; the first item is often an overview without plate.
 * A field an item lacks (`carAttr`, `PlateConfidence`) is taken from the rest of the document
 * (overview item included), found once: another plate's fields are never borrowed.
 */
function cameraPlates(root: XmlElement, blob: BlobReader, maxItems: number): Plates {
  const scene = blob(find(root, 'sourceBase64Data'));
  const entries = items(child(root, 'listInfo'));
  const overview = entries.find((item) => !textOf(item, 'plateNumber'));
  const overviewImage = blob(find(overview, 'targetBase64Data'));
  const withPlate = (item: XmlElement): boolean => Boolean(textOf(item, 'plateNumber'));
  const { kept, ignored } = plateItems(entries, withPlate, maxItems);
  const skip = new Set(entries.filter(withPlate));
  const shared = findOutside(root, ['carAttr', 'PlateConfidence'], skip);
  const plates = kept.map((item) => {
    const carAttr = find(item, 'carAttr') ?? shared.get('carAttr');
    return plateFields({
      plate: textOf(item, 'plateNumber') as string,
      list: textOf(item, 'vehicleListType'),
      direction: textOf(item, 'vehicleDirect') ?? textOf(root, 'vehicleDirect'),
      confidence: find(item, 'PlateConfidence') ?? shared.get('PlateConfidence'),
      channel: textOf(item, 'channelId') ?? textOf(root, 'channelId'),
      vehicle: carAttr,
      plateImage: blob(find(item, 'targetBase64Data')),
      scene: scene ?? overviewImage,
    });
  });
  return { plates, ignored };
}

/** Recorder format: `licensePlateListInfo/item/licensePlateAttribute/licensePlateNumber`. */
function recorderPlates(root: XmlElement, blob: BlobReader, maxItems: number): Plates {
  const scene = blob(find(root, 'sourceBase64Data'));
  const { kept, ignored } = plateItems(items(child(root, 'licensePlateListInfo')), (item) => Boolean(find(item, 'licensePlateNumber')?.text), maxItems);
  const plates = kept.map((item) =>
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
  return { plates, ignored };
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
  // lib's type names the two directions it hands on now; the copy keeps what it read then.
  if (raw.direction) out.direction = raw.direction as PlateDetection['direction'];
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
function timeOf(root: XmlElement, fallback: number): string {
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

/** The first element of each name in document order, in one walk that leaves out the `skip` subtrees. */
function findOutside(root: XmlElement, names: string[], skip: Set<XmlElement>): Map<string, XmlElement> {
  const found = new Map<string, XmlElement>();
  const walk = (el: XmlElement): void => {
    for (const c of el.children) {
      if (found.size === names.length) return;
      if (skip.has(c)) continue;
      if (names.includes(c.name) && !found.has(c.name)) found.set(c.name, c);
      walk(c);
    }
  };
  walk(root);
  return found;
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

/** Names of image elements (`targetBase64Data`, `sourceBase64Data`, ...) where a tag opens. */
const IMAGE_NAME = /<(\w*Base64Data)(?=[\s>/])/g;

/**
 * Cuts the base64 image data out of the text, leaving a marker the parser reads as plain text.
 * Tag ends and contents are found with indexOf, each search starting where the last one ended:
 * one pass over the text, however it is made. A self-closed image element (no image) is skipped.
 */
function extractImages(text: string): { xmlText: string; blobs: string[] } {
  const blobs: string[] = [];
  const parts: string[] = [];
  let copied = 0;
  IMAGE_NAME.lastIndex = 0;
  for (let m = IMAGE_NAME.exec(text); m; m = IMAGE_NAME.exec(text)) {
    const tagEnd = text.indexOf('>', IMAGE_NAME.lastIndex);
    if (tagEnd < 0) break;
    IMAGE_NAME.lastIndex = tagEnd + 1;
    if (text.charCodeAt(tagEnd - 1) === 0x2f /* / */) continue;
    const start = tagEnd + 1;
    const end = text.indexOf(`</${m[1] as string}>`, start);
    if (end < 0) break;
    blobs.push(unwrapCdata(text.slice(start, end)));
    parts.push(text.slice(copied, start), `${BLOB_MARK}${blobs.length - 1}`);
    copied = end;
    IMAGE_NAME.lastIndex = end;
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
export function decodeImageBefore(base64: string | undefined): Buffer | undefined {
  if (!base64 || !/^[A-Za-z0-9+/=\s]+$/.test(base64)) return undefined;
  const bytes = Buffer.from(base64, 'base64');
  const jpeg = bytes.length > 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff;
  const png = bytes.length > 8 && bytes.readUInt32BE(0) === 0x89504e47;
  return jpeg || png ? bytes : undefined;
}
