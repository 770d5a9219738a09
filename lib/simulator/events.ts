import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { inputError, IpcamError } from '../errors/errors';
import { transportError } from '../transport/transport-error';
import { LIST_TYPES, type ListType } from '../events/parse';
import { buildXml, child, xml, XML_NS, type XmlElement, type XmlNode } from '../xml/codec';
import type { Route, SimContext } from './context';
import { PLATE_JPEG, SNAPSHOT_JPEG } from './images';
import type { Simulator } from './index';
import { sendText, sendXmlStatus, sendXmlSuccess, xmlBody } from './respond';
import type { HttpPostConfig, SimulatorState } from './state';

/*
 * Device posts, as the two real formats do them (captures in shared/captures/tvt-events):
 * `ipc`: a camera, `config version="1.7"`, strings in CDATA, `Content-Type: application/xml;
 * charset=utf-8`, keep-alive connection, path-only request line; on the newer push it keeps
 * alive with an empty POST, and while a target moves it posts tracking (`traject`) posts;
 * `nvr`: a recorder, `config version="2.0.0"` with `messageType`, plain base64, no `type`
 * attributes, plates filed by `groupName` without `vehicleListType`,
 * `Content-Type: application/soap+xml`, `Connection: close`, absolute URL in the request line.
 * They speak as the field notes say devices do, not as our parser would like.
 */

export type EventFormat = 'ipc' | 'nvr';
export type EventKind = 'plate' | 'keepalive' | 'alarmStatus' | 'tracking';
export type EventListType = ListType;

/** Who posts: a camera names itself with name/mac/sn, a recorder with name/ip/mac. */
export interface EventIdentity {
  name: string;
  mac: string;
  sn: string;
  ip: string;
}

interface CommonSpec {
  /** Posting device (default: the simulator's own identity, ip 127.0.0.1). */
  device?: Partial<EventIdentity>;
  /** Channel (default 1). */
  channel?: number;
  /** When it happened, ms since epoch (default now). */
  time?: number;
  /** Unit of `currentTime`: real devices send microseconds (default), some ms or s. */
  epoch?: 'us' | 'ms' | 's';
  /**
   * `currentTime` as sent, digits, instead of `time`: e.g. the 20-digit `18445822972087551616`
   * some recorder firmware posts (`BROKEN_CURRENT_TIME`).
   */
  currentTime?: string;
}

export interface PlateEventSpec extends CommonSpec {
  plate: string;
  /**
   * Camera: `vehicleListType`, omitted for `unknown` (as devices do for unknown or expired
   * plates). Recorder: never sent as such; the plate is filed in the group of that name
   * (`RECORDER_LIST_GROUPS`, e.g. `Whitelist`) unless `group` names another.
   */
  listType?: EventListType;
  /** Recorder: the plate group it is filed in (`licensePlateMatchInfo/groupName`), e.g. `Residents`. */
  group?: string;
  /** Recorder: the stored owner (`licensePlateMatchInfo/carOwner`). */
  owner?: string;
  /** `approach` / `away` (newer cameras, `vehicleDirect`). */
  direction?: string;
  /** Percent; sent as `PlateConfidence count="hundredths"`. */
  confidence?: number;
  vehicle?: { color?: string; type?: string; brand?: string; model?: string };
  /** Carry the plate crop and the scene (default true). */
  images?: boolean;
  /** Scene picture (default the simulator snapshot, a real 640x360 JPEG). */
  scene?: Buffer;
  /** Plate crop (default a real 160x48 JPEG). */
  plateImage?: Buffer;
  /** Camera format: firmware spells it `VEHICE` (default) or `VEHICLE`. */
  smartType?: 'VEHICE' | 'VEHICLE';
  /** Camera format: the fields newer cameras add (mac, sn, deviceName, channelId, direction, confidence, carAttr); default true. */
  extended?: boolean;
}

export interface AlarmStatusSpec extends CommonSpec {
  /** Alarm element name (default `vehiceAlarm` for cameras, `perimeterAlarm` for recorders). */
  alarm?: string;
  /** Rule number (default 1). */
  id?: number;
  active?: boolean;
}

export interface KeepAliveSpec extends Pick<CommonSpec, 'device'> {
  /** The empty POST (`Content-Length: 0`) of cameras on the newer push (httpPostV2). */
  empty?: boolean;
}

export type TrackingSpec = Pick<CommonSpec, 'time' | 'epoch' | 'currentTime'>;

/** The 20-digit `currentTime` of a known recorder firmware bug (field notes). */
export const BROKEN_CURRENT_TIME = '18445822972087551616';

/** Recorders file plates in groups; these are the names their list groups go by (the vendor's example: `Whitelist`). */
export const RECORDER_LIST_GROUPS: Readonly<Record<Exclude<EventListType, 'unknown'>, string>> = {
  whiteList: 'Whitelist',
  blackList: 'Blacklist',
  temporaryList: 'Temporary',
  strangerList: 'Stranger',
};

const DEFAULT_IDENTITY: EventIdentity = { name: 'Simulated IPC', mac: '58:5b:69:00:00:01', sn: 'SIM0000000001', ip: '127.0.0.1' };
const CONTENT_TYPE: Record<EventFormat, string> = { ipc: 'application/xml; charset=utf-8', nvr: 'application/soap+xml' };
const SMART_TYPES = 'VEHICE,VFD_MATCH,PEA,VFD,VSD,AOIENTRY,AOILEAVE,PASSLINECOUNT,TRAFFIC';

let targetIds = 100;

/** CDATA without a type attribute (recorder strings, camera alarm-status fields). */
function cdata(name: string, value: string): XmlNode {
  return { name, cdata: value };
}

function plain(name: string, value: string | number): XmlNode {
  return { name, text: String(value) };
}

function identity(device: Partial<EventIdentity> | undefined): EventIdentity {
  return { ...DEFAULT_IDENTITY, ...device };
}

function epochText(spec: CommonSpec): string {
  if (spec.currentTime !== undefined) return spec.currentTime;
  const ms = Math.floor(spec.time ?? Date.now());
  if (spec.epoch === 's') return String(Math.floor(ms / 1000));
  if (spec.epoch === 'ms') return String(ms);
  return `${ms}000`;
}

/** Width and height from the JPEG's start-of-frame, 0x0 when none is found (recorders send 0x0 too). */
export function jpegSize(jpeg: Buffer): { width: number; height: number } {
  let at = 2;
  while (at + 9 < jpeg.length && jpeg[at] === 0xff) {
    const marker = jpeg[at + 1] as number;
    const length = jpeg.readUInt16BE(at + 2);
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { height: jpeg.readUInt16BE(at + 5), width: jpeg.readUInt16BE(at + 7) };
    }
    at += 2 + length;
  }
  return { width: 0, height: 0 };
}

// ---------------------------------------------------------------------------------------------
// Camera format (config version="1.7")

function cameraTarget(image: Buffer, base64: string): XmlNode {
  const { width, height } = jpegSize(image);
  return xml.el('targetImageData', [
    xml.uint('dataType', 0),
    xml.uint('targetType', 2),
    xml.text('Width', String(width), 'tuint32'),
    xml.text('Height', String(height), 'tuint32'),
    xml.uint('targetBase64Length', base64.length),
    xml.str('targetBase64Data', base64),
  ]);
}

function cameraPlate(spec: PlateEventSpec): string {
  const extended = spec.extended !== false;
  const images = spec.images !== false;
  const device = identity(spec.device);
  const scene = spec.scene ?? SNAPSHOT_JPEG;
  const crop = spec.plateImage ?? PLATE_JPEG;
  const sceneBase64 = images ? scene.toString('base64') : '';

  const plateItem: XmlNode[] = [xml.str('plateNumber', spec.plate)];
  if (spec.listType !== undefined && spec.listType !== 'unknown') plateItem.push(xml.text('vehicleListType', spec.listType, 'string'));
  if (extended) {
    if (spec.direction !== undefined) plateItem.push(xml.text('vehicleDirect', spec.direction, 'string'));
    if (spec.confidence !== undefined) plateItem.push({ name: 'PlateConfidence', attrs: { count: Math.round(spec.confidence * 100) } });
    const car = spec.vehicle;
    if (car) {
      const fields = (['color', 'type', 'brand', 'model'] as const).filter((k) => car[k] !== undefined).map((k) => xml.str(k, car[k] as string));
      plateItem.push(xml.el('carAttr', fields));
    }
  }
  if (images) plateItem.push(cameraTarget(crop, crop.toString('base64')));

  const list = images ? [[cameraTarget(scene, sceneBase64)], plateItem] : [plateItem];
  const children: XmlNode[] = [
    xml.text('smartType', spec.smartType ?? 'VEHICE', 'openAlramObj'),
    xml.text('subscribeRelation', 'FEATURE_RESULT', 'subscribeOption'),
    xml.text('currentTime', epochText(spec), 'tint64'),
  ];
  if (extended) {
    children.push(xml.str('mac', device.mac), xml.str('sn', device.sn), xml.str('deviceName', device.name), xml.uint('channelId', spec.channel ?? 1));
  }
  children.push(xml.el('types', [xml.text('openAlramObj', SMART_TYPES, 'string'), xml.text('targetType', '1,2,4', 'string')]), xml.list('listInfo', list));
  if (images) {
    const { width, height } = jpegSize(scene);
    children.push(
      xml.el('sourceDataInfo', [
        xml.uint('dataType', 0),
        xml.uint('width', width),
        xml.uint('height', height),
        xml.uint('sourceBase64Length', sceneBase64.length),
        xml.str('sourceBase64Data', sceneBase64),
      ]),
    );
  }
  return buildXml({ name: 'config', attrs: { version: '1.7', xmlns: XML_NS }, children });
}

/** Old camera keep-alive: a `DeviceInfo` root, not `config`. */
function cameraKeepAlive(spec: KeepAliveSpec): string {
  const d = identity(spec.device);
  return buildXml({
    name: 'DeviceInfo',
    children: [plain('DeviceName', d.name), plain('DeviceNo.', 1), cdata('SN', d.sn), plain('ipAddress', d.ip), plain('macAddress', d.mac)],
  });
}

/** `MM-DD-YYYY hh:mm:ss AM` in this host's zone, as cameras write `dataTime`. */
export function formatDataTime(ms: number): string {
  const d = new Date(ms);
  const two = (n: number): string => String(n).padStart(2, '0');
  const hour = d.getHours() % 12 === 0 ? 12 : d.getHours() % 12;
  return `${two(d.getMonth() + 1)}-${two(d.getDate())}-${d.getFullYear()} ${two(hour)}:${two(d.getMinutes())}:${two(d.getSeconds())} ${d.getHours() < 12 ? 'AM' : 'PM'}`;
}

function cameraAlarmStatus(spec: AlarmStatusSpec): string {
  const d = identity(spec.device);
  return buildXml({
    name: 'config',
    attrs: { version: '1.7', xmlns: XML_NS },
    children: [
      xml.el('alarmStatusInfo', [{ name: spec.alarm ?? 'vehiceAlarm', attrs: { type: 'boolean', id: spec.id ?? 1 }, text: spec.active === false ? 'false' : 'true' }]),
      cdata('dataTime', formatDataTime(spec.time ?? Date.now())),
      xml.el('deviceInfo', [cdata('deviceName', d.name), cdata('deviceNo.', String(spec.channel ?? 1)), cdata('sn', d.sn), cdata('ipAddress', d.ip), cdata('macAddress', d.mac)]),
    ],
  });
}

// ---------------------------------------------------------------------------------------------
// Recorder format (config version="2.0.0", messageType)

function recorderDeviceInfo(spec: CommonSpec, withChannel: boolean): XmlNode {
  const d = identity(spec.device);
  const fields = [cdata('deviceName', d.name), cdata('ip', d.ip), cdata('mac', d.mac)];
  if (withChannel) fields.push(plain('channelId', spec.channel ?? 1));
  return xml.el('deviceInfo', fields);
}

function rect(name: string, x1: number, y1: number, x2: number, y2: number): XmlNode {
  return xml.el(name, [plain('x1', x1), plain('y1', y1), plain('x2', x2), plain('y2', y2)]);
}

function recorderPlate(spec: PlateEventSpec): string {
  const images = spec.images !== false;
  const scene = spec.scene ?? SNAPSHOT_JPEG;
  const crop = spec.plateImage ?? PLATE_JPEG;
  const item: XmlNode[] = [
    plain('targetId', (targetIds += 1)),
    rect('rect', 1104, 546, 1232, 610),
    xml.el('licensePlateAttribute', [cdata('licensePlateNumber', spec.plate), plain('color', 'white')]),
  ];
  const group = spec.group ?? (spec.listType === undefined || spec.listType === 'unknown' ? undefined : RECORDER_LIST_GROUPS[spec.listType]);
  if (group !== undefined || spec.owner !== undefined) {
    const match: XmlNode[] = [];
    if (group !== undefined) match.push(cdata('groupName', group));
    if (spec.owner !== undefined) match.push(cdata('carOwner', spec.owner));
    item.push(xml.el('licensePlateMatchInfo', match));
  }
  if (spec.direction !== undefined) item.push(plain('vehicleDirect', spec.direction));
  if (spec.confidence !== undefined) item.push({ name: 'PlateConfidence', attrs: { count: Math.round(spec.confidence * 100) } });
  item.push(rect('carRect', 0, 0, 0, 0));
  const car = spec.vehicle;
  if (car) {
    const names = { type: 'carType', color: 'color', brand: 'brand', model: 'model' } as const;
    const fields = (['type', 'color', 'brand', 'model'] as const).filter((k) => car[k] !== undefined).map((k) => cdata(names[k], car[k] as string));
    item.push(xml.el('carAttribute', fields));
  }
  const children: XmlNode[] = [plain('messageType', 'alarmData'), recorderDeviceInfo(spec, true), plain('smartType', 'vehicle'), plain('currentTime', epochText(spec))];
  if (images) {
    const base64 = scene.toString('base64');
    const size = jpegSize(scene);
    children.push(
      xml.el('sourceDataInfo', [plain('dataType', 0), plain('width', size.width), plain('height', size.height), plain('sourceBase64Length', base64.length), plain('sourceBase64Data', base64)]),
    );
    const cropBase64 = crop.toString('base64');
    const cropSize = jpegSize(crop);
    item.push(
      xml.el('targetImageData', [
        plain('dataType', 0),
        plain('width', cropSize.width),
        plain('height', cropSize.height),
        plain('targetBase64Length', cropBase64.length),
        plain('targetBase64Data', cropBase64),
      ]),
    );
  }
  children.push(xml.el('licensePlateListInfo', [xml.el('item', item)]));
  return buildXml({ name: 'config', attrs: { version: '2.0.0', xmlns: XML_NS }, children });
}

function recorderKeepAlive(spec: KeepAliveSpec): string {
  return buildXml({ name: 'config', attrs: { version: '2.0.0', xmlns: XML_NS }, children: [plain('messageType', 'keepalive'), recorderDeviceInfo(spec, false)] });
}

function recorderAlarmStatus(spec: AlarmStatusSpec): string {
  return buildXml({
    name: 'config',
    attrs: { version: '2.0.0', xmlns: XML_NS },
    children: [
      plain('messageType', 'alarmStatus'),
      recorderDeviceInfo(spec, true),
      plain('currentTime', epochText(spec)),
      xml.el('alarmStatusInfo', [xml.el(spec.alarm ?? 'perimeterAlarm', [{ name: 'item', attrs: { id: spec.id ?? 1 }, text: spec.active === false ? 'false' : 'true' }])]),
    ],
  });
}

/** A plate detection post, in the camera or the recorder format. */
export function buildPlateEvent(format: EventFormat, spec: PlateEventSpec): string {
  return format === 'ipc' ? cameraPlate(spec) : recorderPlate(spec);
}

export function buildKeepAlive(format: EventFormat, spec: KeepAliveSpec = {}): string {
  if (spec.empty) return '';
  return format === 'ipc' ? cameraKeepAlive(spec) : recorderKeepAlive(spec);
}

/**
 * A camera's tracking post: where its targets are (0-10000 scale), 6-12 a second while one moves;
 * `traject` list, neither `smartType` nor `messageType`.
 */
export function buildTrackingPost(spec: TrackingSpec = {}): string {
  const id = (targetIds += 1);
  const x = (id * 37) % 9000;
  return buildXml({
    name: 'config',
    attrs: { version: '1.7', xmlns: XML_NS },
    children: [
      xml.text('currentTime', epochText(spec), 'tint64'),
      xml.list('traject', [[xml.uint('targetId', id), xml.uint('targetType', 2), xml.el('rect', [xml.uint('X1', x), xml.uint('Y1', 4000), xml.uint('X2', x + 900), xml.uint('Y2', 6000)])]]),
    ],
  });
}

export function buildAlarmStatus(format: EventFormat, spec: AlarmStatusSpec = {}): string {
  return format === 'ipc' ? cameraAlarmStatus(spec) : recorderAlarmStatus(spec);
}

export function eventContentType(format: EventFormat): string {
  return CONTENT_TYPE[format];
}

// ---------------------------------------------------------------------------------------------
// SetHttpPostConfig

/** `SetHttpPostConfig`: where the device posts its events; stored in `state.httpPost`. */
export const httpPostRoute: Route = (ctx) => {
  if (ctx.path !== '/SetHttpPostConfig') return false;
  if (ctx.method !== 'POST') {
    sendXmlStatus(ctx.res, 1, 'Invalid Request');
    return true;
  }
  const root = xmlBody(ctx.res, ctx.body);
  if (!root) return true;
  const config = readHttpPost(child(root, 'httpPost'));
  if (typeof config === 'number') {
    sendXmlStatus(ctx.res, config, config === 16 ? 'Range Error' : 'Missing Parameters');
    return true;
  }
  ctx.state.httpPost = config;
  sendXmlSuccess(ctx.res);
  return true;
};

/** The stored config, or the error code to answer (15 missing, 16 range). */
function readHttpPost(block: XmlElement | undefined): HttpPostConfig | 15 | 16 {
  const text = (name: string): string | undefined => child(block, name)?.text;
  const bSwitch = text('bSwitch');
  const serverIp = text('serverIp');
  const portText = text('serverPort');
  if (!block || bSwitch === undefined || serverIp === undefined || portText === undefined) return 15;
  const keepaliveText = text('keepaliveTimeval') ?? '30';
  const serverPort = Number(portText);
  const keepalive = Number(keepaliveText);
  const url = text('URL') ?? '/';
  const bad =
    (bSwitch !== 'true' && bSwitch !== 'false') ||
    serverIp === '' ||
    !/^\d+$/.test(portText) ||
    serverPort < 1 ||
    serverPort > 65535 ||
    !/^\d+$/.test(keepaliveText) ||
    keepalive < 30 ||
    keepalive > 120;
  if (bad) return 16;
  return { enabled: bSwitch === 'true', serverIp, serverPort, keepalive, url };
}

/** `http://serverIp:serverPort/URL` of a stored config. */
export function httpPostUrl(config: HttpPostConfig): string {
  const host = config.serverIp.includes(':') ? `[${config.serverIp}]` : config.serverIp;
  return `http://${host}:${config.serverPort}${config.url.startsWith('/') ? '' : '/'}${config.url}`;
}

// ---------------------------------------------------------------------------------------------
// Posting

export interface PostTarget {
  url: string;
  format: EventFormat;
  username?: string;
  password?: string;
  /** Connections to the server (default 1: a camera keeps one connection and posts on it in turn). */
  connections?: number;
}

export interface PostResult {
  status: number;
}

/** What `sim.postEvent` / `sim.startPosting` / `POST /_sim/events` take. */
export interface PostEventOptions extends Omit<PlateEventSpec, 'plate'>, Omit<AlarmStatusSpec, keyof CommonSpec>, Omit<KeepAliveSpec, 'device'> {
  /** Where to post (default: the URL stored by SetHttpPostConfig). */
  url?: string;
  /** `tracking`: a camera's tracking posts (give `count` and `ratePerSecond` for a burst); `keepalive` with `empty`: the empty POST. */
  kind?: EventKind;
  format?: EventFormat;
  /** Plate text (default `SIM123`). */
  plate?: string;
  /** Posts to send (default 1; `startPosting`: until stopped). */
  count?: number;
  /** Posts per second (default: back to back). */
  ratePerSecond?: number;
  /** Connections, and posts in flight at once when not rate-limited (default 1). */
  concurrency?: number;
  /** Basic credentials sent with every post. */
  username?: string;
  password?: string;
}

export interface PostingRun {
  stop(): void;
  /** Settles (never rejects) once the run stopped or sent its `count`; the number of posts answered. */
  done: Promise<number>;
}

export interface StartPostingOptions extends PostEventOptions {
  onResult?(result: PostResult, index: number): void;
  onError?(error: IpcamError, index: number): void;
}

const KINDS = new Set<EventKind>(['plate', 'keepalive', 'alarmStatus', 'tracking']);
const FORMATS = new Set<EventFormat>(['ipc', 'nvr']);
const MAX_COUNT = 1_000_000;
const MAX_RATE = 100_000;
const MAX_CONCURRENCY = 256;

interface Plan {
  target: PostTarget;
  count: number | undefined;
  rate: number | undefined;
  concurrency: number;
  make: () => string;
}

/**
 * Sends device posts the way devices do (see the formats above), once, `count` times or at a rate.
 * Keeps a connection pool per server; `close()` stops every run and releases every timer and socket.
 */
export class EventPoster {
  private readonly pools = new Map<string, Pool>();
  private readonly runs = new Set<() => void>();
  private closed = false;

  constructor(private readonly state?: SimulatorState) {}

  /** One post of a ready document. Any HTTP answer is a result; no answer at all is `ECONN`/`ETIMEOUT`. */
  async send(target: PostTarget, body: string | Buffer): Promise<PostResult> {
    if (this.closed) throw new IpcamError('ECONN', 'The event poster is closed');
    const url = new URL(target.url);
    const headers: Record<string, string> = { 'content-type': CONTENT_TYPE[target.format] };
    if (target.username !== undefined) headers['authorization'] = `Basic ${Buffer.from(`${target.username}:${target.password ?? ''}`, 'utf8').toString('base64')}`;
    const recorder = target.format === 'nvr';
    // Recorders close the connection after each post and put the absolute URL in the request line.
    if (recorder) headers['connection'] = 'close';
    const path = recorder ? `${url.origin}${url.pathname}${url.search}` : `${url.pathname}${url.search}`;
    try {
      const res = await this.pool(url.origin, target.connections ?? 1).request({ method: 'POST', path, headers, body });
      await res.body.dump();
      return { status: res.statusCode };
    } catch (err) {
      throw transportError(err, { target: `${url.origin} (POST ${url.pathname})` });
    }
  }

  /** Posts per the options and resolves with every answer, in order; rejects on the first post that got none. */
  async postEvent(options: PostEventOptions = {}): Promise<PostResult[]> {
    const plan = this.plan(options, 1);
    const count = plan.count ?? 1;
    const results: PostResult[] = [];
    let failure: IpcamError | undefined;
    const run: PostingRun = this.schedule(plan, count, (index, outcome) => {
      if (outcome instanceof IpcamError) {
        failure ??= outcome;
        run.stop();
      } else {
        results[index] = outcome;
      }
    });
    await run.done;
    if (failure) throw failure;
    return results;
  }

  /** Posts at `ratePerSecond` (default 1) until `stop()`, `count` posts, or `close()`. */
  startPosting(options: StartPostingOptions = {}): PostingRun {
    const plan = this.plan({ ...options, ratePerSecond: options.ratePerSecond ?? 1 }, undefined);
    return this.schedule(plan, plan.count, (index, outcome) => {
      if (outcome instanceof IpcamError) options.onError?.(outcome, index);
      else options.onResult?.(outcome, index);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const stop of [...this.runs]) stop();
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(pools.map((p) => p.destroy()));
  }

  private pool(origin: string, connections: number): Pool {
    const key = `${connections} ${origin}`;
    let pool = this.pools.get(key);
    if (!pool) {
      pool = new Pool(origin, { connections, headersTimeout: 15_000, bodyTimeout: 15_000, keepAliveTimeout: 30_000 });
      this.pools.set(key, pool);
    }
    return pool;
  }

  /**
   * Runs posts `0..count-1` (unbounded without count): at the rate, or back to back with
   * `concurrency` in flight. Every timer is cleared by `stop()`.
   */
  private schedule(plan: Plan, count: number | undefined, report: (index: number, outcome: PostResult | IpcamError) => void): PostingRun {
    let issued = 0;
    let settled = 0;
    let answered = 0;
    let inFlight = 0;
    let stopped = false;
    let timer: NodeJS.Timeout | undefined;
    let finish: (n: number) => void = () => undefined;
    const done = new Promise<number>((resolve) => (finish = resolve));
    const started = performance.now();

    const stop = (): void => {
      if (stopped) return;
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      this.runs.delete(stop);
      if (inFlight === 0) finish(answered);
    };
    const exhausted = (): boolean => count !== undefined && issued >= count;
    const launch = (): void => {
      const index = issued++;
      inFlight += 1;
      void (async () => {
        try {
          const result = await this.send(plan.target, plan.make());
          answered += 1;
          report(index, result);
        } catch (err) {
          report(index, err instanceof IpcamError ? err : new IpcamError('ECONN', err instanceof Error ? err.message : String(err)));
        } finally {
          inFlight -= 1;
          settled += 1;
          if (stopped || (count !== undefined && settled >= count)) {
            if (inFlight === 0) {
              stopped = true;
              this.runs.delete(stop);
              finish(answered);
            }
          } else if (plan.rate === undefined) {
            pump();
          }
        }
      })();
    };
    const pump = (): void => {
      while (!stopped && !exhausted() && inFlight < plan.concurrency) launch();
    };
    const tick = (): void => {
      timer = undefined;
      if (stopped) return;
      const due = Math.floor(((performance.now() - started) / 1000) * (plan.rate as number)) + 1;
      while (!stopped && !exhausted() && issued < due) launch();
      if (!stopped && !exhausted()) timer = setTimeout(tick, Math.max(1000 / (plan.rate as number), 4));
    };

    this.runs.add(stop);
    if (this.closed) stop();
    else if (count === 0) stop();
    else if (plan.rate === undefined) pump();
    else tick();
    return { stop, done };
  }

  private plan(options: PostEventOptions, defaultCount: number | undefined): Plan {
    const o = checkPostOptions(options);
    const url = o.url ?? this.storedUrl();
    const format = o.format ?? 'ipc';
    const concurrency = o.concurrency ?? 1;
    const target: PostTarget = { url, format, connections: concurrency };
    if (o.username !== undefined) target.username = o.username;
    if (o.password !== undefined) target.password = o.password;
    const device = { ...this.ownIdentity(), ...o.device };
    const kind = o.kind ?? 'plate';
    const make = (): string => {
      if (kind === 'keepalive') return buildKeepAlive(format, { device, ...(o.empty !== undefined && { empty: o.empty }) });
      if (kind === 'tracking') return buildTrackingPost(o);
      if (kind === 'alarmStatus') return buildAlarmStatus(format, { ...o, device });
      return buildPlateEvent(format, { ...o, device, plate: o.plate ?? 'SIM123' });
    };
    return { target, count: o.count ?? defaultCount, rate: o.ratePerSecond, concurrency, make };
  }

  private storedUrl(): string {
    const config = this.state?.httpPost;
    if (!config) throw inputError('No url given and no SetHttpPostConfig received: say where to post');
    if (!config.enabled) throw inputError('HTTP post is switched off (SetHttpPostConfig bSwitch false): give a url or switch it on');
    return httpPostUrl(config);
  }

  private ownIdentity(): Partial<EventIdentity> {
    const d = this.state?.device;
    return d ? { name: d.deviceName, mac: d.mac, sn: d.sn } : {};
  }
}

/** Validates options given in code or as JSON to the control API; `EINPUT` names the bad field. */
export function checkPostOptions(value: unknown): PostEventOptions {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw inputError('Event options must be an object');
  const o = value as Record<string, unknown>;
  const str = (key: string, max = 256): void => {
    const v = o[key];
    if (v !== undefined && (typeof v !== 'string' || v.length > max)) throw inputError(`${key} must be text of at most ${max} characters`);
  };
  const num = (key: string, min: number, max: number, integer: boolean): void => {
    const v = o[key];
    if (v === undefined) return;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max || (integer && !Number.isInteger(v))) {
      throw inputError(`${key} must be ${integer ? 'a whole number' : 'a number'} from ${min} to ${max}, got ${JSON.stringify(v)}`);
    }
  };
  if (o['kind'] !== undefined && !KINDS.has(o['kind'] as EventKind)) throw inputError(`kind must be one of ${[...KINDS].join(', ')}`);
  if (o['format'] !== undefined && !FORMATS.has(o['format'] as EventFormat)) throw inputError(`format must be one of ${[...FORMATS].join(', ')}`);
  if (o['listType'] !== undefined && !(LIST_TYPES as readonly unknown[]).includes(o['listType'])) throw inputError(`listType must be one of ${LIST_TYPES.join(', ')}`);
  if (o['epoch'] !== undefined && !['us', 'ms', 's'].includes(o['epoch'] as string)) throw inputError('epoch must be us, ms or s');
  if (o['smartType'] !== undefined && o['smartType'] !== 'VEHICE' && o['smartType'] !== 'VEHICLE') throw inputError('smartType must be VEHICE or VEHICLE');
  for (const key of ['url', 'direction', 'username', 'password', 'alarm']) str(key);
  str('plate', 64);
  str('group', 64);
  str('owner', 64);
  if (o['currentTime'] !== undefined && (typeof o['currentTime'] !== 'string' || !/^\d{1,24}$/.test(o['currentTime']))) throw inputError('currentTime must be 1 to 24 digits');
  if (o['plate'] === '') throw inputError('plate must not be empty');
  num('confidence', 0, 100, false);
  num('count', 0, MAX_COUNT, true);
  num('ratePerSecond', 0.001, MAX_RATE, false);
  num('concurrency', 1, MAX_CONCURRENCY, true);
  num('channel', 0, 65535, true);
  num('id', 0, 65535, true);
  num('time', 0, 8.64e15, false);
  for (const key of ['images', 'extended', 'active', 'empty']) {
    if (o[key] !== undefined && typeof o[key] !== 'boolean') throw inputError(`${key} must be true or false`);
  }
  for (const key of ['scene', 'plateImage']) {
    if (o[key] !== undefined && !Buffer.isBuffer(o[key])) throw inputError(`${key} must be a Buffer`);
  }
  if (o['url'] !== undefined) {
    let url: URL;
    try {
      url = new URL(o['url'] as string);
    } catch {
      throw inputError(`url ${JSON.stringify(o['url'])} is not an absolute URL`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw inputError('url must be http or https');
  }
  for (const key of ['device', 'vehicle']) {
    const v = o[key];
    if (v === undefined) continue;
    if (typeof v !== 'object' || v === null || Array.isArray(v)) throw inputError(`${key} must be an object`);
    for (const [k, field] of Object.entries(v)) if (typeof field !== 'string') throw inputError(`${key}.${k} must be text`);
  }
  return o as PostEventOptions;
}

/** `POST /_sim/events` of the control API: JSON options in, `{ results: [{ status }] }` out. */
export async function eventsControl(ctx: SimContext, sim: Simulator): Promise<true> {
  const json = (status: number, value: unknown): true => {
    sendText(ctx.res, status, JSON.stringify(value, null, 2), 'application/json');
    return true;
  };
  let options: unknown;
  try {
    options = JSON.parse(ctx.body.toString('utf8') || '{}');
  } catch {
    return json(400, { error: 'body is not JSON' });
  }
  try {
    const results = await sim.postEvent(checkPostOptions(options));
    return json(200, { results });
  } catch (err) {
    if (err instanceof IpcamError) return json(err.code === 'EINPUT' ? 400 : 502, { error: err.message, code: err.code });
    throw err;
  }
}
