import { imageSignature } from '../safety/content-type';
import { MAX_XML_ELEMENTS } from '../safety/budgets';
import { IpcamError } from '../errors/errors';
import { isoTime } from './iso-time';
import { MAX_CHANNEL } from '../xml/channel';
import { child, items, parseXml, toTyped, type XmlElement, type XmlValue } from '../xml/codec';

/** Who posted: from the document where it says, else the sender's address. */
export interface EventDevice {
  name?: string;
  mac?: string;
  sn?: string;
  ip: string;
}

/** The lists a plate may be on; `unknown`: on none the device knows of. */
export const LIST_TYPES = ['whiteList', 'blackList', 'temporaryList', 'strangerList', 'unknown'] as const;
export type ListType = (typeof LIST_TYPES)[number];

/** Which way the vehicle moves: the documented `leave` and the posted `away` are one meaning. */
export type Direction = 'approach' | 'away';

export interface PlateDetection {
  kind: 'plate';
  plate: string;
  listType: ListType;
  /** A recorder's user-defined plate group (`licensePlateMatchInfo/groupName`). */
  group?: string;
  /** The stored owner of the plate, where the device sends it (`carOwner`). */
  owner?: string;
  direction?: Direction;
  /** Percent. */
  confidence?: number;
  channel?: number;
  /** ISO 8601. */
  time: string;
  device: EventDevice;
  vehicle?: { color?: string; type?: string; brand?: string; model?: string };
  /** Base64 text as posted; may be a placeholder: check with `imageBase64`, decode with `decodeImage`. */
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

/** The list types a post may name; `unknown` (or none) leaves the list to the plate's group. */
const NAMED_LISTS: ReadonlySet<string> = new Set(LIST_TYPES.filter((t) => t !== 'unknown'));
const DIRECTIONS: ReadonlyMap<string, Direction> = new Map([
  ['approach', 'approach'],
  ['away', 'away'],
  ['leave', 'away'],
]);
/** Latest instant a `Date` holds (ms since epoch): a time beyond it cannot be read. */
const MAX_DATE_MS = 8.64e15;
const BLOB_MARK = '@ipcam-blob:';

/**
 * What one post may cost. Real posts hold about a hundred elements and attributes and one or two
 * plates (captures); the XML around their images is a few kilobytes. The bounds leave a wide
 * margin above that and keep the worst post to a short, linear parse.
 */
export interface ParseLimits {
  /**
   * Elements, attributes and character references in the XML outside the image data: the XML
   * codec's element budget (`MAX_XML_ELEMENTS`), counted here with attributes and references, and
   * handed to the codec as its element budget for the post.
   */
  maxNodes: number;
  /** Characters of XML outside the image data. */
  maxMarkup: number;
  /** Plates read from one post; further plate items are skipped and counted. */
  maxItems: number;
}

export const PARSE_LIMITS: Readonly<ParseLimits> = Object.freeze({ maxNodes: MAX_XML_ELEMENTS, maxMarkup: 256 * 1024, maxItems: 100 });

/** A post over a `ParseLimits` bound: refused before the XML parser sees it. */
export class PostTooComplex extends IpcamError {
  constructor(message: string) {
    super('EPARSE', message);
    this.name = 'PostTooComplex';
  }
}

/** The posts in a body and how many plate items beyond `maxItems` were skipped. */
export interface ReadPost {
  posts: DevicePost[];
  ignoredItems: number;
}

/**
 * Parses one device post into what it reports; a post may carry several plates. Image data is
 * cut out before XML parsing (bodies run to 500 KB and more), so parsing costs what the small
 * document around it costs. Throws EPARSE when unreadable, `PostTooComplex` over a limit.
 */
export function parseDevicePost(body: Buffer | string, senderIp: string, receivedAt = Date.now(), limits: Partial<ParseLimits> = {}): DevicePost[] {
  return readDevicePost(body, senderIp, receivedAt, limits).posts;
}

/** `parseDevicePost` that also says how many plate items the item cap skipped. Linear in the body size. */
export function readDevicePost(body: Buffer | string, senderIp: string, receivedAt = Date.now(), limits: Partial<ParseLimits> = {}): ReadPost {
  const bounds: ParseLimits = { ...PARSE_LIMITS, ...limits };
  if (isTrackingPost(body)) return { posts: [], ignoredItems: 0 };
  const text = rootText(body);
  // Cameras on the newer push (httpPostV2) keep alive with an empty POST: it names no one, so the sender is its address.
  if (text === undefined) return { posts: [{ kind: 'keepalive', device: { ip: senderIp }, time: isoTime(receivedAt) }], ignoredItems: 0 };
  const { xmlText, blobs } = extractImages(text, bounds.maxMarkup);
  checkSize(xmlText, bounds);
  const root = parseXml(xmlText, { maxElements: bounds.maxNodes });
  const device = deviceOf(root, senderIp);
  const time = timeOf(root, receivedAt);
  // A post whose XML names no image element (no picture was cut out, and 'Base64Data' is nowhere in
  // what is left) has none to look for: its tree is not walked for one per plate and per scene.
  const picture: PictureReader =
    blobs.length > 0 || xmlText.includes(IMAGE_SUFFIX)
      ? (scope, name) => {
          const text = find(scope, name)?.text;
          if (text === undefined || !text.startsWith(BLOB_MARK)) return text === '' ? undefined : text;
          return blobs[Number(text.slice(BLOB_MARK.length))];
        }
      : noPicture;
  const one = (post: DevicePost): ReadPost => ({ posts: [post], ignoredItems: 0 });

  const messageElement = child(root, 'messageType');
  const messageType = messageElement?.text;
  if (root.name.toLowerCase() === 'deviceinfo' || messageType?.trim().toLowerCase() === 'keepalive') {
    return one({ kind: 'keepalive', device, time });
  }
  const channel = channelOf(root);
  const alarmInfo = child(root, 'alarmStatusInfo');
  if (alarmInfo) return one({ kind: 'alarmStatus', time, ...(channel !== undefined && { channel }), device, alarms: alarmsOf(alarmInfo) });

  const smartType = textOf(root, 'smartType') ?? '';
  const recorderLayout = child(root, 'licensePlateListInfo') !== undefined;
  // Field notes: smartType in any case (VEHICE, VEHICLE, vehicle). A 2.x post without messageType
  // is the camera layout; in the new envelope (2.x with messageType) a vehicle is a plate only
  // with licensePlateListInfo: a capitalised VEHICLE there without it is another event.
  const newEnvelope = messageElement !== undefined && /^\s*2\./.test(root.attrs['version'] ?? '');
  if (/^vehic(l)?e$/i.test(smartType.trim()) && (recorderLayout || !newEnvelope)) {
    const { plates, ignored } = recorderLayout ? recorderPlates(root, picture, bounds.maxItems) : cameraPlates(root, picture, bounds.maxItems);
    const posts = plates.map((p): DevicePost => ({ kind: 'plate', ...p, time, device, ...(p.channel === undefined && channel !== undefined && { channel }) }));
    return { posts, ignoredItems: ignored };
  }
  if (smartType === '' && !messageElement) throw new IpcamError('EPARSE', `Unknown post: root <${root.name.slice(0, 64)}> without smartType or messageType`);
  return one({ kind: 'event', type: smartType || (messageType as string), time, ...(channel !== undefined && { channel }), device, data: eventData(toTyped(root)) });
}

/**
 * A tracking post (`<traject type="list">`, neither `smartType` nor `messageType`): 6-12 a second
 * per moving target and never a plate. Told from the raw text before any parsing, so that they
 * cost the plate path nothing; a plate or any other event names its `smartType` or `messageType`
 * near the start, so for them the search stops there.
 */
export function isTrackingPost(body: Buffer | string): boolean {
  return !hasTag(body, 'smartType') && !hasTag(body, 'messageType') && hasTag(body, 'traject');
}

/** Whether an element of exactly that name opens anywhere in the text (`<name>`, `<name ...`, `<name/>`). */
function hasTag(body: Buffer | string, name: string): boolean {
  const open = `<${name}`;
  for (let at = body.indexOf(open); at >= 0; at = body.indexOf(open, at + open.length)) {
    const next = typeof body === 'string' ? body.charCodeAt(at + open.length) : body[at + open.length];
    // '>', '/', space, tab, CR, LF: the name ends here.
    if (next === 0x3e || next === 0x2f || next === 0x20 || next === 0x09 || next === 0x0d || next === 0x0a) return true;
  }
  return false;
}

/**
 * The XML parser's cost grows with the markup and with every element, attribute and character
 * reference (each `<` that opens something, each `=`, each `&`): bounded here by one scan, before
 * it builds anything.
 */
function checkSize(xmlText: string, limits: ParseLimits): void {
  checkMarkup(xmlText.length, limits.maxMarkup);
  // Each mark counted is a character of its own: a text no longer than the bound cannot pass it
  // (a plate post's XML is a few thousand characters, the bound 10,000), and is not searched.
  if (xmlText.length <= limits.maxNodes) return;
  let nodes = 0;
  for (const mark of ['<', '=', '&']) {
    for (let at = xmlText.indexOf(mark); at >= 0; at = xmlText.indexOf(mark, at + 1)) {
      if (mark === '<' && xmlText.charCodeAt(at + 1) === 0x2f /* </ */) continue;
      if (++nodes > limits.maxNodes) throw new PostTooComplex(`Too complex: more than ${limits.maxNodes} elements, attributes and references`);
    }
  }
}

function checkMarkup(length: number, maxMarkup: number): void {
  if (length > maxMarkup) throw new PostTooComplex(`Too large: ${length} characters of XML besides the images, more than ${maxMarkup}`);
}

type PlateFields = Omit<PlateDetection, 'kind' | 'time' | 'device'>;
/** The picture in the first element of that name under `scope` (depth first), if any. */
type PictureReader = (scope: XmlElement | undefined, name: string) => string | undefined;

function noPicture(): undefined {
  return undefined;
}
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
 * (overview item included), found once: another plate's fields are never borrowed. That walk of
 * the rest of the document is made only when an item lacks one (a post whose items carry both,
 * the common case, is never walked again), and the overview is looked for only without a scene.
 */
function cameraPlates(root: XmlElement, picture: PictureReader, maxItems: number): Plates {
  const entries = items(child(root, 'listInfo'));
  const scene = picture(root, 'sourceBase64Data') ?? picture(entries.find((item) => !textOf(item, 'plateNumber')), 'targetBase64Data');
  const withPlate = (item: XmlElement): boolean => Boolean(textOf(item, 'plateNumber'));
  const { kept, ignored } = plateItems(entries, withPlate, maxItems);
  let shared: Map<string, XmlElement> | undefined;
  const outside = (name: string): XmlElement | undefined => (shared ??= findOutside(root, ['carAttr', 'PlateConfidence'], new Set(entries.filter(withPlate)))).get(name);
  const plates = kept.map((item) =>
    plateFields({
      plate: textOf(item, 'plateNumber') as string,
      list: textOf(item, 'vehicleListType'),
      direction: textOf(item, 'vehicleDirect') ?? textOf(root, 'vehicleDirect'),
      confidence: find(item, 'PlateConfidence') ?? outside('PlateConfidence'),
      channel: textOf(item, 'channelId') ?? textOf(root, 'channelId'),
      vehicle: find(item, 'carAttr') ?? outside('carAttr'),
      plateImage: picture(item, 'targetBase64Data'),
      scene,
    }),
  );
  return { plates, ignored };
}

/** Recorder format: `licensePlateListInfo/item/licensePlateAttribute/licensePlateNumber`. */
function recorderPlates(root: XmlElement, picture: PictureReader, maxItems: number): Plates {
  const scene = picture(root, 'sourceBase64Data');
  const { kept, ignored } = plateItems(items(child(root, 'licensePlateListInfo')), (item) => Boolean(find(item, 'licensePlateNumber')?.text), maxItems);
  const plates = kept.map((item) =>
    plateFields({
      plate: find(item, 'licensePlateNumber')?.text as string,
      list: textOf(item, 'vehicleListType') ?? find(item, 'vehicleListType')?.text,
      // Recorders file plates in groups (`licensePlateMatchInfo/groupName`), often without a list type.
      group: find(item, 'groupName')?.text,
      owner: find(item, 'carOwner')?.text,
      direction: find(item, 'vehicleDirect')?.text ?? find(item, 'direction')?.text,
      confidence: find(item, 'PlateConfidence') ?? find(item, 'confidence'),
      channel: undefined,
      vehicle: child(item, 'carAttribute'),
      plateImage: picture(item, 'targetBase64Data'),
      scene,
    }),
  );
  return { plates, ignored };
}

interface RawPlate {
  plate: string;
  list: string | undefined;
  group?: string | undefined;
  owner?: string | undefined;
  direction: string | undefined;
  confidence: XmlElement | undefined;
  channel: string | undefined;
  vehicle: XmlElement | undefined;
  plateImage: string | undefined;
  scene: string | undefined;
}

function plateFields(raw: RawPlate): PlateFields {
  const listType = NAMED_LISTS.has(raw.list ?? '') ? (raw.list as ListType) : listTypeOfGroup(raw.group);
  const out: PlateFields = { plate: raw.plate, listType, images: {} };
  if (raw.group) out.group = raw.group;
  if (raw.owner) out.owner = raw.owner;
  const direction = directionOf(raw.direction);
  if (direction) out.direction = direction;
  const confidence = confidenceOf(raw.confidence);
  if (confidence !== undefined) out.confidence = confidence;
  const channel = channelNumber(raw.channel);
  if (channel !== undefined) out.channel = channel;
  const vehicle = vehicleOf(raw.vehicle);
  if (vehicle) out.vehicle = vehicle;
  if (raw.plateImage) out.images.plate = raw.plateImage;
  if (raw.scene) out.images.scene = raw.scene;
  return out;
}

/**
 * The list a recorder's group name names, case and spaces ignored (`Whitelist`, `Allow List`,
 * `Temporary visitors`); any other name, or none, is `unknown`: the group itself is handed on.
 */
export function listTypeOfGroup(group: string | undefined): ListType {
  const name = (group ?? '').replace(/\s+/g, '').toLowerCase();
  if (name === 'whitelist' || name === 'allowlist') return 'whiteList';
  if (name === 'blacklist' || name === 'blocklist' || name === 'denylist') return 'blackList';
  if (name.startsWith('temporary')) return 'temporaryList';
  if (name.startsWith('stranger')) return 'strangerList';
  return 'unknown';
}

/** `approach`, or `away` for both spellings of the other way; any other word is left out. */
function directionOf(text: string | undefined): Direction | undefined {
  return text === undefined ? undefined : DIRECTIONS.get(text.trim().toLowerCase());
}

/** `PlateConfidence count="9900"` (hundredths of a percent), or a plain number (percent or 0-1). */
function confidenceOf(el: XmlElement | undefined): number | undefined {
  if (!el) return undefined;
  const hundredths = Number(el.attrs['count']);
  if (el.attrs['count'] !== undefined && Number.isFinite(hundredths)) return percent(hundredths / 100);
  const value = Number(el.text);
  if (el.text === '' || !Number.isFinite(value)) return undefined;
  if (value > 100) return percent(value / 100);
  return percent(value <= 1 ? value * 100 : value);
}

/** A percentage, or none when out of 0-100: the field is left out, the plate kept. */
function percent(value: number): number | undefined {
  return value >= 0 && value <= 100 ? value : undefined;
}

function vehicleOf(el: XmlElement | undefined): PlateDetection['vehicle'] | undefined {
  if (!el) return undefined;
  const pick = (...names: string[]): string | undefined => {
    for (const name of names) {
      const value = textOf(el, name);
      if (value) return value;
    }
    return undefined;
  };
  const vehicle: NonNullable<PlateDetection['vehicle']> = {};
  const color = pick('color', 'carColor');
  const type = pick('carType', 'type', 'vehicleType');
  const brand = pick('brand', 'carBrand');
  const model = pick('model', 'carModel');
  if (color) vehicle.color = color;
  if (type) vehicle.type = type;
  if (brand) vehicle.brand = brand;
  if (model) vehicle.model = model;
  return color || type || brand || model ? vehicle : undefined;
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
  const device: EventDevice = { ip: deviceField(info, root, 'ip', 'ipaddress') ?? senderIp };
  const name = deviceField(info, root, 'devicename');
  const mac = deviceField(info, root, 'mac', 'macaddress');
  const sn = deviceField(info, root, 'sn');
  if (name) device.name = name;
  if (mac) device.mac = mac;
  if (sn) device.sn = sn;
  return device;
}

/** The first non-empty text of a child named `name`, else `other` (names lower case, matched in any case), in `info`, then in `root`. */
function deviceField(info: XmlElement | undefined, root: XmlElement, name: string, other?: string): string | undefined {
  return fieldIn(info, name, other) ?? fieldIn(root, name, other);
}

function fieldIn(scope: XmlElement | undefined, name: string, other: string | undefined): string | undefined {
  return childCI(scope, name)?.text || (other === undefined ? undefined : childCI(scope, other)?.text) || undefined;
}

function channelOf(root: XmlElement): number | undefined {
  return channelNumber(textOf(child(root, 'deviceInfo'), 'channelId') ?? textOf(root, 'channelId'));
}

/** A channel number a device can have, else none: a field out of range is left out, the post kept. */
function channelNumber(text: string | undefined): number | undefined {
  const n = Number(text);
  return text !== undefined && text.trim() !== '' && Number.isInteger(n) && n >= 0 && n <= MAX_CHANNEL ? n : undefined;
}

/**
 * Epoch in micro-, milli- or seconds (`currentTime`), or `dataTime` as `MM-DD-YYYY hh:mm:ss AM`;
 * a time no date can hold (recorders post a 20-digit `currentTime`, a firmware bug) is the
 * receive time, as the vendor says to use.
 */
export function timeOf(root: XmlElement, fallback: number): string {
  const epoch = textOf(root, 'currentTime');
  if (epoch && /^\d+$/.test(epoch)) {
    const n = Number(epoch);
    const ms = n >= 1e14 ? n / 1000 : n >= 1e11 ? n : n * 1000;
    if (ms <= MAX_DATE_MS) return isoTime(Math.floor(ms));
  }
  const formatted = textOf(root, 'dataTime') ?? textOf(root, 'dateTime');
  const parsed = formatted ? parseDeviceDate(formatted) : undefined;
  return isoTime(parsed ?? fallback);
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

/** The first child whose name is `lower` (given in lower case) in any case. */
function childCI(el: XmlElement | undefined, lower: string): XmlElement | undefined {
  if (!el) return undefined;
  // Names of another length cannot match: no name is lowered for them.
  for (const c of el.children) if (c.name.length === lower.length && c.name.toLowerCase() === lower) return c;
  return undefined;
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

/**
 * The post from its root element on: some cameras put raw base64 between the XML declaration and
 * the root. Undefined for a blank post (white space only), EPARSE for one without an element.
 *
 * A body's bytes are decoded from the root on, not decoded whole and then sliced: the root is
 * found among the bytes ('<', '?>' and the declaration are ASCII, which UTF-8 never uses inside
 * another character, so they stand where they stand in the text), and what is decoded is a
 * string of its own. A slice of a longer string is read through its parent at every character,
 * and the well-formedness scan and the parser read every character of a post (parseXml took
 * 3% longer over a slice).
 */
function rootText(body: Buffer | string): string | undefined {
  const bytes = typeof body !== 'string';
  let start = bytes ? (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? 3 : 0) : body.charCodeAt(0) === 0xfeff ? 1 : 0;
  if (declarationAt(body, start)) {
    const end = body.indexOf('?>', start);
    if (end < 0) throw new IpcamError('EPARSE', 'Unterminated XML declaration');
    start = end + 2;
  }
  // Skip anything up to the first element (or comment) start.
  const root = body.indexOf('<', start);
  if (root < 0) {
    // Only a post without '<' can be blank: the whole of it is decoded for that check alone.
    if (/^\s*$/.test(bytes ? body.toString('utf8') : body)) return undefined;
    throw new IpcamError('EPARSE', 'The post holds no XML element');
  }
  return bytes ? body.toString('utf8', root) : body.slice(root);
}

const DECLARATION = '<?xml';

/** Whether `<?xml` stands at `start`, in the text or its bytes. */
function declarationAt(body: Buffer | string, start: number): boolean {
  if (typeof body === 'string') return body.startsWith(DECLARATION, start);
  if (body.length < start + DECLARATION.length) return false;
  for (let i = 0; i < DECLARATION.length; i++) if (body[start + i] !== DECLARATION.charCodeAt(i)) return false;
  return true;
}

const IMAGE_SUFFIX = 'Base64Data';
/** What may follow an element name in its start tag (JavaScript's `\s`, as the expression this replaced read it). */
const AFTER_NAME = /[\s>/]/;

function isWordChar(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f;
}

/**
 * The next start tag at or after `from` whose name ends in `Base64Data` (`targetBase64Data`,
 * `sourceBase64Data`, ...): where its name ends and the name, or undefined. Found with the native
 * search for the suffix (most of a post is never looked at char by char), each candidate checked
 * as `/<(\w*Base64Data)(?=[\s>/])/` would: only the end of a run of word characters that a `<`
 * opens at or after `from`. Each run is walked back at most once, so the search stays linear.
 */
function nextImageTag(text: string, from: number): { nameEnd: number; name: string } | undefined {
  for (let at = text.indexOf(IMAGE_SUFFIX, from); at >= 0; at = text.indexOf(IMAGE_SUFFIX, at + 1)) {
    const nameEnd = at + IMAGE_SUFFIX.length;
    if (nameEnd >= text.length || !AFTER_NAME.test(text.charAt(nameEnd))) continue;
    let start = at;
    while (start > from && isWordChar(text.charCodeAt(start - 1))) start--;
    if (start > from && text.charCodeAt(start - 1) === 0x3c /* < */) return { nameEnd, name: text.slice(start, nameEnd) };
  }
  return undefined;
}

/**
 * Cuts the base64 image data out of the text, leaving a marker the parser reads as plain text.
 * Names, tag ends and contents are found with indexOf, each search starting where the last one
 * ended: one pass over the text, however it is made. A self-closed image element (no image) is
 * skipped. XML beyond `maxMarkup` characters is refused before the text without images is made.
 */
export function extractImages(text: string, maxMarkup = Infinity): { xmlText: string; blobs: string[] } {
  const blobs: string[] = [];
  const parts: string[] = [];
  let copied = 0;
  for (let tag = nextImageTag(text, 0); tag; ) {
    const tagEnd = text.indexOf('>', tag.nameEnd);
    if (tagEnd < 0) break;
    if (text.charCodeAt(tagEnd - 1) === 0x2f /* / */) {
      tag = nextImageTag(text, tagEnd + 1);
      continue;
    }
    const start = tagEnd + 1;
    const end = text.indexOf(`</${tag.name}>`, start);
    if (end < 0) break;
    blobs.push(unwrapCdata(text.slice(start, end)));
    parts.push(text.slice(copied, start), `${BLOB_MARK}${blobs.length - 1}`);
    copied = end;
    tag = nextImageTag(text, end);
  }
  if (blobs.length === 0) return { xmlText: text, blobs };
  parts.push(text.slice(copied));
  let length = 0;
  for (const part of parts) length += part.length;
  checkMarkup(length, maxMarkup);
  return { xmlText: parts.join(''), blobs };
}

function unwrapCdata(content: string): string {
  const trimmed = content.trim();
  return trimmed.startsWith('<![CDATA[') && trimmed.endsWith(']]>') ? trimmed.slice(9, -3).trim() : trimmed;
}

/**
 * Event data for flows: image fields dropped (they are large; plate events carry them decoded),
 * and every `item` an array: a device sends one target as one element and two as two, with no
 * `type="list"` to tell, so a flow reading `item[0]` works for one target as for many.
 */
function eventData(value: XmlValue): XmlValue {
  if (Array.isArray(value)) return value.map(eventData);
  if (typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([k]) => !k.endsWith('Base64Data'))
      .map(([k, v]) => {
        const data = eventData(v);
        return [k, k === 'item' && !Array.isArray(data) ? [data] : data];
      }),
  );
}

const BASE64_DIGITS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
/** The first characters of the base64 of a JPEG (`FF D8 FF`) and of a PNG (its 8-byte signature). */
const JPEG_BASE64 = '/9j/';
const PNG_BASE64 = 'iVBORw0KGgo';
/** Characters of base64 checked at a time (a multiple of 4), and where they are decoded to. */
const CHECK_CHARS = 64 * 1024;
const CHECK_BYTES = Buffer.allocUnsafe((CHECK_CHARS / 4) * 3);

/**
 * Posted base64 of a picture as base64: undefined unless it is base64 whose bytes start as a
 * JPEG or a PNG does (placeholders, other data). Base64 as devices send it is passed on as it
 * is, after checking, neither decoded nor encoded again; anything else (lines, missing `=`) is
 * decoded and encoded, so the text is always what decoding and encoding gives.
 */
export function imageBase64(text: string | undefined): string | undefined {
  if (!text) return undefined;
  if (isPictureBase64(text)) return text;
  return decodeOther(text)?.toString('base64');
}

/** Decodes posted base64 to an image, or undefined for text that is not one (see `imageBase64`). */
export function decodeImage(base64: string | undefined): Buffer | undefined {
  if (!base64) return undefined;
  return isPictureBase64(base64) ? Buffer.from(base64, 'base64') : decodeOther(base64);
}

/** Text that `isPictureBase64` did not pass (lines, no padding, not base64): decoded, then its signature checked. */
function decodeOther(base64: string): Buffer | undefined {
  if (!/^[A-Za-z0-9+/=\s]+$/.test(base64)) return undefined;
  const bytes = Buffer.from(base64, 'base64');
  return imageSignature(bytes) ? bytes : undefined;
}

/**
 * Base64 that decoding and encoding would give back unchanged (the alphabet only, `=` padding
 * to a multiple of 4, unused bits of the last digit zero) and that starts as a JPEG or a PNG
 * does, with more than the signature. Checked by decoding it piece by piece into a small buffer:
 * Node decodes faster than a regular expression reads, skips what is not base64 and stops at
 * `=`, so any such character leaves fewer bytes than the length promises.
 */
function isPictureBase64(text: string): boolean {
  const length = text.length;
  if (length < 16 || length % 4 !== 0 || !(text.startsWith(JPEG_BASE64) || text.startsWith(PNG_BASE64))) return false;
  // Node's decoder also reads the URL alphabet: no base64 here.
  if (text.includes('-') || text.includes('_')) return false;
  let padding = 0;
  while (padding < 3 && text.charCodeAt(length - 1 - padding) === 0x3d /* = */) padding++;
  if (padding === 3) return false;
  if (padding > 0 && (BASE64_DIGITS.indexOf(text.charAt(length - 1 - padding)) & (padding === 2 ? 0x0f : 0x03)) !== 0) return false;
  for (let at = 0; at < length; at += CHECK_CHARS) {
    const end = Math.min(length, at + CHECK_CHARS);
    const expected = ((end - at) / 4) * 3 - (end === length ? padding : 0);
    if (CHECK_BYTES.write(text.slice(at, end), 'base64') !== expected) return false;
  }
  return true;
}
