/**
 * Spec 2, 4.11 and 4.15: edge records (`edgerecord`: search and event names) and the network
 * storage they are kept on (`sdstate?action=filelistnas` listings, `/ns/IPCamera<MAC>/...`
 * downloads), the operations of `ipcam-edgerecord`.
 */
import { ownCopy, recordField, WalkBudget } from '../safety/budgets';
import { encodeCgi, parseKeyValues } from '../cgi/codec';
import { IpcamError, inputError } from '../errors/errors';
import { FALLBACK_TYPE, handedOnType } from '../safety/content-type';
import { echo } from '../errors/echo';
import { bool, dateTime, int, oneOf, optional, shape, text, withDefault, withLabels, type Param } from '../input/params';
import { child } from '../xml/codec';
import type { DeviceClient } from '../transport/client';
import { defineOp, type CgiAnswer, type OpContext, type Operation } from './types';

export const EDGERECORD_PATH = '/cgi-bin/admin/edgerecord';
export const SDSTATE_PATH = '/cgi-bin/admin/sdstate';
/** Network-storage downloads: `/ns/IPCamera<MAC>/<date>/<hour>/<record id>/<file>`. */
export const NAS_PATH = '/ns';
/** The folder of a camera on the network storage is `IPCamera` and its MAC address. */
export const NAS_FOLDER_PREFIX = 'IPCamera';

/** Spec 4.15 and 8: `limit` 1-99 records per page, default 10. */
export const RECORD_LIMIT = { min: 1, max: 99 } as const;
export const RECORD_LIMIT_DEFAULT = 10;
export const RECORD_SORTS = ['asc', 'desc'] as const;
/** `trigtype` for every trigger type. */
export const TRIGGER_ALL = 'All';
/** `typename` that lists the event-list names instead of records. */
export const EVENT_NAMES_TYPENAME = 'geteventname';
/** Longest trigger type and event name sent (the spec gives none; device event names are short). */
export const TRIGGER_MAX = 64;
export const TYPENAME_MAX = 64;
/** Longest path below `IPCamera<MAC>/` (date/hour/record id/file name need far less). */
export const STORAGE_PATH_MAX = 255;
/** Most folders deep a storage path goes (`<date>/<hour>/<record id>/<file>` is 4). */
export const STORAGE_DEPTH_MAX = 8;
/** A storage path: `/` between names, no empty name, no `.` or `..`, no backslash. */
export const STORAGE_PATH_PATTERN = /^(?!.*(?:^|\/)\.{1,2}(?:\/|$))\/?(?:[^/\\]+\/)*[^/\\]*$/;
/** A MAC address: 12 hex digits, optionally in pairs apart by `:` or `-`. */
export const MAC_PATTERN = /^[0-9A-Fa-f]{2}(?:[:-]?[0-9A-Fa-f]{2}){5}$/;

/** `all`: most pages walked (99 000 records at 99 a page) before the walk ends with EDEVICE. */
export const MAX_WALK_PAGES = 1000;
/** Most lines read from one edgerecord answer (99 records of 10 lines need about 1000). */
export const MAX_ANSWER_LINES = 4096;
/**
 * Most records read from one answer when no limit is given. A page is read up to the `limit`
 * asked: the records a device sends beyond it are not read (and do not make the page count as
 * more than full).
 */
export const MAX_PAGE_RECORDS = 400;
/** The largest `count(*)` read as a total (the devices count in 32 bits); a larger one declares no total. */
export const MAX_RECORD_TOTAL = 0xffff_ffff;
/** Most event names taken from one answer. */
export const MAX_EVENT_NAMES = 256;
/** Most entries taken from one storage listing. */
export const MAX_LISTING_ENTRIES = 5000;
/** Largest file downloaded from the network storage (record files are pictures and XML). */
export const MAX_DOWNLOAD_BYTES = 32 * 1024 * 1024;
/** Largest edgerecord or listing answer read. */
const MAX_TEXT_ANSWER_BYTES = 2 * 1024 * 1024;
/** Longest name a storage path can hold: a longer listing entry is left out (it could not be downloaded). */
const MAX_NAME = 255;

// ---------------------------------------------------------------------------------------------
// Records

/** One edge record as the device describes it (spec 2), typed. */
export interface EdgeRecord {
  name: string;
  /** A number when the device writes digits, else its text. */
  recordId: number | string;
  /** `YYYY-MM-DD HH:MM:SS` device time, as the device writes it. */
  start: string;
  stop: string;
  /** Seconds (from digits or `HH:MM:SS`); null when the device writes something else. */
  duration: number | null;
  trigger: string;
  recordingType: string;
  complete: boolean;
  storage: string;
  media: string;
}

const RECORD_FIELDS: Record<string, keyof EdgeRecord> = {
  name: 'name',
  recordid: 'recordId',
  starttime: 'start',
  stoptime: 'stop',
  duration: 'duration',
  triggertype: 'trigger',
  recordingtype: 'recordingType',
  complete: 'complete',
  storagetype: 'storage',
  mediatype: 'media',
};

/**
 * The lines of an answer that are not blank, one at a time (a reader that has what it needs stops
 * early), at most `max` of them (a longer answer is EPARSE: the device is not believed).
 */
function* linesOf(text: string, max: number, what: string): Generator<string> {
  let count = 0;
  let from = 0;
  while (from <= text.length) {
    const at = text.indexOf('\n', from);
    const end = at < 0 ? text.length : at;
    const line = text.slice(from, end).replace(/\r/g, '');
    if (line.trim() !== '') {
      if (count++ >= max) throw new IpcamError('EPARSE', `The ${what} answer is longer than ${max} lines`);
      yield line;
    }
    if (at < 0) break;
    from = at + 1;
  }
}

function recordId(value: string): number | string {
  const n = Number(value);
  return /^\d{1,15}$/.test(value) && Number.isSafeInteger(n) ? n : value;
}

function seconds(value: string): number | null {
  if (/^\d{1,9}$/.test(value)) return Number(value);
  const hms = /^(\d{1,5}):([0-5]\d):([0-5]\d)$/.exec(value);
  return hms ? Number(hms[1]) * 3600 + Number(hms[2]) * 60 + Number(hms[3]) : null;
}

function emptyRecord(): EdgeRecord {
  return { name: '', recordId: '', start: '', stop: '', duration: null, trigger: '', recordingType: '', complete: false, storage: '', media: '' };
}

/** Records of one answer; `cut` when it held more than were read. */
export interface RecordPage {
  records: EdgeRecord[];
  total: number | undefined;
  cut: boolean;
}

/** The text fields of a record, as a walk counts them against its budget. */
function recordTexts(r: EdgeRecord): string[] {
  return [r.name, String(r.recordId), r.start, r.stop, r.trigger, r.recordingType, r.storage, r.media];
}

/**
 * `count(*)`: a whole number up to `MAX_RECORD_TOTAL`; a larger one (any number of digits)
 * declares no total (undefined) and costs nothing else: the records are read as they are.
 */
function recordTotal(value: string): number | undefined {
  if (!/^\d+$/.test(value)) throw new IpcamError('EPARSE', `The edge record answer has an unreadable count(*) ${echo(value)}`);
  const total = Number(value);
  return Number.isSafeInteger(total) && total <= MAX_RECORD_TOTAL ? total : undefined;
}

/**
 * `count(*)=<n>` and per record its `Name=`, `RecordID=`, `StartTime=`... lines (spec 4.15).
 * Keys are read without regard to case and to a prefix such as `root.` or `record1.`; a record
 * ends where one of its keys comes again. At most `limit` records are read; the rest are not.
 * A field longer than `MAX_RECORD_FIELD_BYTES` is EPARSE; each is a string of its own, never a
 * slice that keeps the answer alive. `total` is undefined when `count(*)` is too large to be a
 * count (no total declared).
 */
export function parseRecords(body: string, limit: number = MAX_PAGE_RECORDS): RecordPage {
  let total: number | undefined;
  let counted = false;
  let full = false;
  const records: EdgeRecord[] = [];
  let current: EdgeRecord | undefined;
  let seen = new Set<string>();
  for (const line of linesOf(body, MAX_ANSWER_LINES, 'edge record')) {
    const eq = line.indexOf('=');
    if (eq <= 0) continue;
    const key = line.slice(0, eq).trim().toLowerCase();
    if (key === 'count(*)') {
      total = recordTotal(line.slice(eq + 1).trim());
      counted = true;
      continue;
    }
    const field = RECORD_FIELDS[key.slice(key.lastIndexOf('.') + 1)];
    if (field === undefined) continue;
    if (full) {
      if (counted) break;
      continue;
    }
    if (!current || seen.has(field)) {
      // Beyond the limit records are not read; the answer is still scanned for its count(*).
      if (records.length >= limit) {
        full = true;
        continue;
      }
      current = emptyRecord();
      records.push(current);
      seen = new Set();
    }
    seen.add(field);
    const value = recordField(line.slice(eq + 1).trim(), 'edge record', field);
    switch (field) {
      case 'recordId':
        current.recordId = recordId(value);
        break;
      case 'duration':
        current.duration = seconds(value);
        break;
      case 'complete':
        current.complete = /^(yes|true|1)$/i.test(value);
        break;
      default:
        current[field] = value;
    }
  }
  if (!counted) {
    if (records.length === 0 && body.trim() !== '') throw new IpcamError('EPARSE', 'The answer is not an edge record list (no count(*) and no record)');
    total = records.length;
  }
  return { records, total, cut: full };
}

const searchParams = shape({
  from: optional(dateTime()),
  to: optional(dateTime()),
  trigger: withDefault(text({ max: TRIGGER_MAX, kind: 'line' }), TRIGGER_ALL),
  sort: withDefault(oneOf(RECORD_SORTS), 'asc'),
  limit: optional(int(RECORD_LIMIT)),
  typename: optional(text({ max: TYPENAME_MAX, kind: 'line' })),
  all: withDefault(bool(), false),
});
type SearchParams = ReturnType<typeof searchParams.parse>;

function searchQuery(p: SearchParams, sort: 'asc' | 'desc', from: string | undefined): Array<[string, string | number]> {
  const query: Array<[string, string | number]> = [['sort', sort], ['trigtype', p.trigger]];
  if (from !== undefined) query.push(['fromdate', from]);
  if (p.to !== undefined) query.push(['todate', p.to]);
  query.push(['limit', p.limit ?? RECORD_LIMIT_DEFAULT]);
  if (p.typename !== undefined) query.push(['typename', p.typename]);
  return query;
}

/** One page: the records up to the limit asked (a device sending more is read that far). */
async function searchPage(ctx: OpContext, p: SearchParams, sort: 'asc' | 'desc', from: string | undefined): Promise<RecordPage> {
  const answer = await ctx.cgi({ path: EDGERECORD_PATH, query: searchQuery(p, sort, from), maxBytes: MAX_TEXT_ANSWER_BYTES, what: 'edge record search', names: ['sort', 'trigtype', 'fromdate', 'todate', 'limit', 'typename'] });
  return parseRecords(answer.text, p.limit ?? RECORD_LIMIT_DEFAULT);
}

const DEVICE_TIME = dateTime();

/** The device time one second after `time` (`YYYY-MM-DD HH:MM:SS`). */
export function nextSecond(time: string): string {
  const d = new Date(`${time.replace(' ', 'T')}Z`);
  d.setUTCSeconds(d.getUTCSeconds() + 1);
  return d.toISOString().slice(0, 19).replace('T', ' ');
}

/** A start time the walk can go on from, or EPARSE. */
function walkTime(start: string | undefined): string {
  try {
    return DEVICE_TIME.parse(start, 'StartTime');
  } catch {
    throw new IpcamError('EPARSE', `The device gave a record start time that is not a date (${echo(start)}): the walk cannot go on from it`);
  }
}

/**
 * Every record of the range, oldest first. Pages are asked forward in time, each from the latest
 * start time of the page before; that second is asked again (records sharing it may not all have
 * fitted), so records of that second are told apart by all their fields and each is kept once;
 * a record before it was read on an earlier page and is not kept again. A full page of one single
 * second cannot be paged past with `fromdate`: that second is read whole (`fromdate` = `todate` =
 * it, the largest page) and the walk goes on from the next second. A short page ends the walk; a
 * page holding more records than asked is read up to the limit and counts as full. A full page
 * with nothing new, or a device that goes back in time, is EDEVICE (it repeats itself: it ignores
 * `fromdate`); so are more records in one second than the largest page, more than
 * `MAX_WALK_PAGES` pages and more record text than the walk budget `MAX_WALK_BYTES`.
 */
async function walkRecords(ctx: OpContext, p: SearchParams): Promise<{ records: EdgeRecord[]; total: number | undefined }> {
  const records: EdgeRecord[] = [];
  const budget = new WalkBudget('edge record walk');
  const pageSize = p.limit ?? RECORD_LIMIT.max;
  let from = p.from;
  /** After the first page: a record before `from` was read on an earlier page. */
  let walked = false;
  /** The records kept that start at `from`, as keys: the only ones a page can repeat. At most two pages of them. */
  let boundary = new Set<string>();
  const keep = (record: EdgeRecord): boolean => {
    if (from !== undefined && walked && record.start < from) return false;
    if (record.start === from) {
      const key = JSON.stringify(record);
      if (boundary.has(key)) return false;
      boundary.add(key);
    }
    budget.spend(recordTexts(record));
    records.push(record);
    return true;
  };
  /** The keys of a page's records that start at `second`: the boundary once the walk goes on from it. */
  const keysAt = (page: EdgeRecord[], second: string): Set<string> => new Set(page.filter((r) => r.start === second).map((r) => JSON.stringify(r)));
  let total: number | undefined;
  for (let page = 0; page < MAX_WALK_PAGES; page++) {
    const answer = await searchPage(ctx, { ...p, limit: pageSize }, 'asc', from);
    if (!walked) total = answer.total;
    let fresh = 0;
    for (const record of answer.records) if (keep(record)) fresh++;
    walked = true;
    if (answer.records.length < pageSize) return { records, total };
    const starts = answer.records.map((r) => r.start).sort();
    const latest = walkTime(starts.at(-1));
    if (from !== undefined && latest < from) throw new IpcamError('EDEVICE', `The device answered records from before ${from}: it ignores fromdate; nothing more can be read`);
    if (starts[0] === latest) {
      if (latest !== from) {
        from = latest;
        boundary = keysAt(answer.records, latest);
      }
      const second = await searchPage(ctx, { ...p, to: latest, limit: RECORD_LIMIT.max }, 'asc', latest);
      const same = second.records.filter((r) => r.start === latest);
      // Without a count the device may hold more of that second than it sent or than were read.
      const declared = second.total ?? (second.cut || second.records.length >= RECORD_LIMIT.max ? Infinity : second.records.length);
      if (declared > RECORD_LIMIT.max || same.length < declared) {
        throw new IpcamError('EDEVICE', `More than ${Math.min(declared, RECORD_LIMIT.max)} records start at ${latest} and the device pages by start time only: they cannot all be read`);
      }
      for (const record of same) keep(record);
      from = nextSecond(latest);
      boundary = new Set();
      if (p.to !== undefined && from > p.to) return { records, total };
      continue;
    }
    if (fresh === 0) {
      throw new IpcamError('EDEVICE', `The device answered the same ${pageSize} records again from ${from ?? 'the start'}: it ignores fromdate; nothing more can be read`);
    }
    if (latest !== from) boundary = keysAt(answer.records, latest);
    from = latest;
  }
  throw new IpcamError('EDEVICE', `The device sent more than ${MAX_WALK_PAGES} pages of records: stopped (give a shorter from-to range)`);
}

export const search = defineOp({
  name: 'search',
  label: 'Search records',
  api: 'cgi',
  access: 'admin',
  class: 'read',
  summary: 'Searches the edge records by time, trigger type and event name (one page, or every page with all)',
  params: withLabels(searchParams, { from: 'From', to: 'To', trigger: 'Trigger', sort: 'Order', limit: 'Per page', typename: 'Event name', all: 'Every page' }),
  async run(ctx, p) {
    if (p.typename !== undefined && p.typename.trim().toLowerCase() === EVENT_NAMES_TYPENAME) throw inputError(`typename ${EVENT_NAMES_TYPENAME} lists event names: use the operation eventNames`);
    if (p.from !== undefined && p.to !== undefined && p.from > p.to) throw inputError(`from (${p.from}) is after to (${p.to})`);
    if (!p.all) {
      const { records, total } = await searchPage(ctx, p, p.sort, p.from);
      return { payload: records, total };
    }
    const { records, total } = await walkRecords(ctx, p);
    // Walked oldest first; the sort asked for decides the order given back.
    if (p.sort === 'desc') records.reverse();
    return { payload: records, total };
  },
});

/** Event-list names, one per line, as a bare name or after `=` (`EventName=Door`); `count(*)` skipped. */
export function parseEventNames(body: string): string[] {
  const names: string[] = [];
  for (const line of linesOf(body, MAX_EVENT_NAMES * 4, 'event name')) {
    const eq = line.indexOf('=');
    if (eq >= 0 && line.slice(0, eq).trim().toLowerCase() === 'count(*)') continue;
    const name = (eq >= 0 ? line.slice(eq + 1) : line).trim();
    if (name === '' || name.length > TYPENAME_MAX || names.includes(name)) continue;
    if (names.length >= MAX_EVENT_NAMES) throw new IpcamError('EPARSE', `The device listed more than ${MAX_EVENT_NAMES} event names`);
    // A string of its own: a slice would keep the whole answer alive.
    names.push(ownCopy(name));
  }
  return names;
}

export const eventNames = defineOp({
  name: 'eventNames',
  label: 'Event names',
  api: 'cgi',
  access: 'admin',
  class: 'read',
  summary: 'Lists the event-list names records can be searched by (typename)',
  params: shape({}),
  request: () => ({ path: EDGERECORD_PATH, query: { typename: EVENT_NAMES_TYPENAME }, maxBytes: MAX_TEXT_ANSWER_BYTES, what: 'event name list' }),
  parse: (answer: CgiAnswer) => ({ payload: parseEventNames(answer.text) }),
});

// ---------------------------------------------------------------------------------------------
// Network storage

/** A path below `IPCamera<MAC>/` (spec 4.11), as listStorage gives it. */
function storagePath(): Param<string> {
  return text({ max: STORAGE_PATH_MAX, kind: 'line', pattern: STORAGE_PATH_PATTERN, patternText: 'a path like 2026-03-01/10/1001 (names apart by /, no . or .., no backslash)' });
}

const macParam = text({ max: 17, kind: 'line', pattern: MAC_PATTERN, patternText: 'a MAC address like 58:5B:69:00:00:01' });

/** The names of a checked path, and whether it ends with `/` (a folder). */
function segmentsOf(path: string | undefined, field: string): { names: string[]; folder: boolean } {
  const names = (path ?? '').split('/').filter((s) => s !== '');
  if (names.length > STORAGE_DEPTH_MAX) throw inputError(`${field} goes more than ${STORAGE_DEPTH_MAX} folders deep`);
  return { names, folder: path === undefined || path.endsWith('/') || names.length === 0 };
}

/** The folder name of a camera: `IPCamera` and the MAC's 12 hex digits (the device's in upper case, a given one as given). */
function nasFolder(mac: string): string {
  return `${NAS_FOLDER_PREFIX}${mac.replace(/[:-]/g, '')}`;
}

/** The MAC read from each client, so that a walk through the folders asks it once. */
const MAC_OF = new WeakMap<DeviceClient, string>();

/**
 * The device's MAC address: the CGI parameter `Network.eth0.MACAddress`, or else the `mac` of
 * the XML device information. Transport and authentication failures are told as they are.
 */
async function deviceMac(ctx: OpContext): Promise<string> {
  const known = MAC_OF.get(ctx.client);
  if (known !== undefined) return known;
  const usable = (value: string | undefined): string | undefined => {
    const mac = value?.trim();
    return mac !== undefined && MAC_PATTERN.test(mac) ? mac.replace(/[:-]/g, '').toUpperCase() : undefined;
  };
  const soft = (err: unknown): undefined => {
    if (err instanceof IpcamError && (err.code === 'EHTTP' || err.code === 'EDEVICE' || err.code === 'EPARSE')) return undefined;
    throw err;
  };
  let mac = await ctx
    .cgi({ path: '/cgi-bin/admin/param', query: { action: 'list', group: 'Network.eth0.MACAddress' }, maxBytes: 64 * 1024, what: 'MAC address read' })
    .then((answer) => usable(parseKeyValues(answer.text).get('Network.eth0.MACAddress')), soft);
  mac ??= await ctx
    .xml({ path: '/GetDeviceInfo', method: 'GET' })
    .then((root) => usable(child(child(root, 'deviceInfo') ?? root, 'mac')?.text), soft);
  if (mac === undefined) throw new IpcamError('EDEVICE', 'The device did not tell its MAC address (Network.eth0.MACAddress or the XML device information): give mac');
  MAC_OF.set(ctx.client, mac);
  return mac;
}

/** One entry of a storage listing. */
export interface StorageEntry {
  name: string;
  /** The path below `IPCamera<MAC>/`, for listStorage (`directory`) or download (`path`). */
  path: string;
  size: number;
  /** As the listing writes it (e.g. `Mar 1 10:00`). */
  date: string;
  /** A folder (a date, an hour, a record), not a file. */
  directory: boolean;
}

const LS_DATE = String.raw`[A-Z][a-z]{2}\s+\d{1,2}\s+(?:\d{1,2}:\d{2}|\d{4})|\d{4}-\d{2}-\d{2}\s+\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:\s+[+-]\d{4})?`;
/** `drwxr-xr-x  2 root root  4096 Mar  1 10:00 1001`: type and mode, then anything up to the size, the date, the name. */
const LS_LINE = new RegExp(String.raw`^([-dlbcps])[-rwxsStTl]{9}\S*\s+(?:\S.*?\s+)??(\d{1,15})\s+(${LS_DATE})\s(.+)$`);
const TOTAL_LINE = /^total\s*[:=]?\s*(\d{1,9})\s*$/i;

/** A `Total` line and ls-style lines (spec 4.11); `.`, `..` and names no path can hold are left out. */
export function parseListing(body: string, directory: readonly string[]): { entries: StorageEntry[]; total: number } {
  let total: number | undefined;
  const entries: StorageEntry[] = [];
  for (const line of linesOf(body, MAX_LISTING_ENTRIES + 16, 'storage listing')) {
    const totalLine = TOTAL_LINE.exec(line.trim());
    if (totalLine) {
      total = Number(totalLine[1]);
      continue;
    }
    const match = LS_LINE.exec(line.trim());
    if (!match) continue;
    const [, type, size, date, rawName] = match as unknown as [string, string, string, string, string];
    const name = type === 'l' ? rawName.replace(/ -> .*$/, '') : rawName;
    if (name === '.' || name === '..' || name.includes('/') || name.includes('\\') || name.length > MAX_NAME) continue;
    if (entries.length >= MAX_LISTING_ENTRIES) throw new IpcamError('EPARSE', `The storage listing holds more than ${MAX_LISTING_ENTRIES} entries`);
    // Strings of their own: a slice of the answer would keep all of it.
    const kept = recordField(name, 'storage entry', 'name');
    entries.push({ name: kept, path: [...directory, kept].join('/'), size: Number(size), date: recordField(date.replace(/\s+/g, ' '), 'storage entry', 'date'), directory: type === 'd' });
  }
  if (total === undefined && entries.length === 0 && body.trim() !== '') throw new IpcamError('EPARSE', 'The answer is not a storage listing (no Total line and no entry)');
  return { entries, total: total ?? entries.length };
}

export const listStorage = defineOp({
  name: 'listStorage',
  label: 'List a storage folder',
  api: 'cgi',
  access: 'admin',
  class: 'read',
  summary: 'Lists a folder of the network storage the records are kept on (dates, hours, records, files)',
  params: withLabels(shape({ directory: optional(storagePath()), mac: optional(macParam) }), { directory: 'Folder', mac: 'Device MAC' }),
  async run(ctx, p) {
    const { names, folder } = segmentsOf(p.directory, 'directory');
    const mac = p.mac ?? (await deviceMac(ctx));
    const directory = `${nasFolder(mac)}/${names.join('/')}${folder && names.length > 0 ? '/' : ''}`;
    const answer = await ctx.cgi({ path: SDSTATE_PATH, query: [['action', 'filelistnas'], ['directory', directory]], maxBytes: MAX_TEXT_ANSWER_BYTES, what: 'storage listing' });
    const { entries, total } = parseListing(answer.text, names);
    return { payload: entries, total };
  },
});

/** Types guessed from a file's extension where the device gives none (XML is not handed on as such: see lib/safety/content-type.ts). */
const CONTENT_TYPES: Record<string, string> = { jpg: 'image/jpeg', jpeg: 'image/jpeg', png: 'image/png', txt: 'text/plain', mp4: 'video/mp4', avi: 'video/x-msvideo' };

export const download = defineOp({
  name: 'download',
  label: 'Download a record file',
  api: 'cgi',
  access: 'admin',
  class: 'read',
  summary: 'Downloads one record file of the network storage',
  params: withLabels(shape({ path: storagePath(), mac: optional(macParam) }), { path: 'File path', mac: 'Device MAC' }),
  async run(ctx, p) {
    const { names, folder } = segmentsOf(p.path, 'path');
    const filename = names.at(-1);
    if (filename === undefined || folder) throw inputError(`path ${echo(p.path)} names a folder: give a file path as listStorage gives it`);
    const mac = p.mac ?? (await deviceMac(ctx));
    // Each name percent-encoded on its own: the `/` between them stay path separators.
    const path = [NAS_PATH, nasFolder(mac), ...names].map((s, i) => (i === 0 ? s : encodeCgi(s))).join('/');
    const answer = await ctx.cgi({ path, maxBytes: MAX_DOWNLOAD_BYTES, what: 'download', content: true });
    const given = answer.contentType.split(';')[0]?.trim().toLowerCase() ?? '';
    const guessed = CONTENT_TYPES[filename.slice(filename.lastIndexOf('.') + 1).toLowerCase()] ?? FALLBACK_TYPE;
    // Where the device names no type, the extension's; a type it names passes only from the allow list.
    const contentType = given === '' || given === FALLBACK_TYPE ? guessed : handedOnType(given);
    return { payload: answer.body, filename, contentType };
  },
});

export const EDGE_OPERATIONS: readonly Operation[] = [search, eventNames, listStorage, download];
