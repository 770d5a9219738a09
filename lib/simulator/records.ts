import {
  EDGERECORD_PATH,
  EVENT_NAMES_TYPENAME,
  NAS_FOLDER_PREFIX,
  NAS_PATH,
  RECORD_LIMIT,
  RECORD_LIMIT_DEFAULT,
  RECORD_SORTS,
  SDSTATE_PATH,
  STORAGE_PATH_MAX,
  STORAGE_PATH_PATTERN,
  TRIGGER_ALL,
  TRIGGER_MAX,
  TYPENAME_MAX,
} from '../ops/edge';
import { dateTime, int, oneOf, text } from '../input/params';
import type { Route, SimContext } from './context';
import { queryValue } from './context';
import { SNAPSHOT_JPEG } from './images';
import { sendBuffer, sendText } from './respond';

/** One record on the simulated SD card, with the event-list name it was recorded for. */
export interface SimRecord {
  id: number;
  name: string;
  /** `YYYY-MM-DD HH:MM:SS` device time. */
  start: string;
  stop: string;
  /** Seconds. */
  duration: number;
  trigger: string;
  event: string;
  recordingType: string;
}

const DAYS = ['2026-03-01', '2026-03-02', '2026-03-03', '2026-03-04'];
/** Times of a day's records; several share a second, as bursts of alarms do. */
const TIMES = ['06:12:05', '08:30:00', '08:30:00', '08:30:00', '10:00:00', '12:45:10', '15:20:00', '15:20:00', '18:05:30', '22:10:00'];
const TRIGGERS: Array<{ trigger: string; event: string; recordingType: string }> = [
  { trigger: 'Motion', event: 'Door motion', recordingType: 'Event' },
  { trigger: 'DigitalInput', event: 'Gate input', recordingType: 'Event' },
  { trigger: 'Schedule', event: 'Night schedule', recordingType: 'Continuous' },
  { trigger: 'Tamper', event: 'Tamper alarm', recordingType: 'Event' },
];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const RECORD_XML = (r: SimRecord): string =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<recording><id>${r.id}</id><start>${r.start}</start><stop>${r.stop}</stop><trigger>${r.trigger}</trigger><event>${r.event}</event></recording>\n`;
/** The files of every record folder (spec 4.11: jpg images and `recoring.xml`, sic). */
const RECORD_FILES = ['snapshot1.jpg', 'snapshot2.jpg', 'recoring.xml'];

function addSeconds(time: string, seconds: number): string {
  const d = new Date(`${time.replace(' ', 'T')}Z`);
  d.setUTCSeconds(d.getUTCSeconds() + seconds);
  return d.toISOString().slice(0, 19).replace('T', ' ');
}

/** Forty believable records over four days: several sharing a start time, four trigger types. */
export function initialRecords(): SimRecord[] {
  const records: SimRecord[] = [];
  for (const day of DAYS) {
    for (const time of TIMES) {
      const i = records.length;
      const kind = TRIGGERS[(i * 7 + 3) % TRIGGERS.length] as (typeof TRIGGERS)[number];
      const duration = 10 + ((i * 13) % 50);
      const start = `${day} ${time}`;
      const id = 1001 + i;
      records.push({ id, name: `record-${id}`, start, stop: addSeconds(start, duration), duration, ...kind });
    }
  }
  return records;
}

const SEARCH_RULES = {
  sort: oneOf(RECORD_SORTS),
  trigtype: text({ max: TRIGGER_MAX }),
  typename: text({ max: TYPENAME_MAX }),
  limit: int(RECORD_LIMIT),
  date: dateTime(),
};
const DEVICE_DATE = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;
const STORAGE_PATH = text({ max: STORAGE_PATH_MAX, pattern: STORAGE_PATH_PATTERN });

/** The simulated device's edge records (edgerecord) and network storage (sdstate filelistnas, /ns downloads). */
export class SimulatedRecords {
  /** The records on the card; tests may replace them. */
  records: SimRecord[] = initialRecords();
  /** A faulty device: `fromdate` is ignored, so every page starts at the first record. */
  ignoreFromDate = false;
  /** How the MAC address shows in the storage folder name; set from the device's MAC by default. */
  folderMac: string | undefined;

  readonly route: Route = (ctx) => {
    if (ctx.path === EDGERECORD_PATH) {
      sendText(ctx.res, 200, this.edgerecord(ctx));
      return true;
    }
    if (ctx.path === SDSTATE_PATH && queryValue(ctx, 'action') === 'filelistnas') {
      this.listing(ctx);
      return true;
    }
    if (ctx.path.startsWith(`${NAS_PATH}/`)) {
      this.download(ctx);
      return true;
    }
    return false;
  };

  eventNames(): string[] {
    return [...new Set(this.records.map((r) => r.event))];
  }

  private folder(ctx: SimContext): string {
    return `${NAS_FOLDER_PREFIX}${this.folderMac ?? ctx.state.device.mac.replace(/:/g, '').toUpperCase()}`;
  }

  /** `count(*)=<n>` and each record's lines (spec 4.15), or an error line for a value the device refuses. */
  private edgerecord(ctx: SimContext): string {
    const get = (key: string): string | undefined => queryValue(ctx, key);
    const typename = get('typename');
    if (typename === EVENT_NAMES_TYPENAME) return this.eventNames().map((n) => `EventName=${n}\r\n`).join('');
    const refused = (key: string): string => `# Error: Error setting '${key}'\r\n`;
    const checked = <T>(key: string, parse: (v: string) => T, fallback: T): T | undefined => {
      const value = get(key);
      if (value === undefined) return fallback;
      try {
        return parse(value);
      } catch {
        return undefined;
      }
    };
    const sort = checked('sort', (v) => SEARCH_RULES.sort.parse(v, 'sort'), 'asc');
    if (sort === undefined) return refused('sort');
    const trigger = checked('trigtype', (v) => SEARCH_RULES.trigtype.parse(v, 'trigtype'), TRIGGER_ALL);
    if (trigger === undefined) return refused('trigtype');
    const limit = checked('limit', (v) => SEARCH_RULES.limit.parse(v, 'limit'), RECORD_LIMIT_DEFAULT);
    if (limit === undefined) return refused('limit');
    const date = (v: string): string => {
      if (!DEVICE_DATE.test(v)) throw new Error('not a device date');
      return SEARCH_RULES.date.parse(v, 'date');
    };
    const from = checked('fromdate', date, '');
    if (from === undefined) return refused('fromdate');
    const to = checked('todate', date, '');
    if (to === undefined) return refused('todate');
    const event = typename === undefined ? undefined : checked('typename', (v) => SEARCH_RULES.typename.parse(v, 'typename'), '');
    if (event === undefined && typename !== undefined) return refused('typename');

    const matching = this.records
      .filter((r) => (this.ignoreFromDate || from === '' || r.start >= from) && (to === '' || r.start <= to))
      .filter((r) => trigger === TRIGGER_ALL || r.trigger === trigger)
      .filter((r) => event === undefined || r.event === event)
      .sort((a, b) => (a.start === b.start ? a.id - b.id : a.start < b.start ? -1 : 1));
    if (sort === 'desc') matching.reverse();
    const lines = [`count(*)=${matching.length}`];
    for (const r of matching.slice(0, limit)) {
      lines.push(
        `Name=${r.name}`,
        `RecordID=${r.id}`,
        `StartTime=${r.start}`,
        `StopTime=${r.stop}`,
        `Duration=${r.duration}`,
        `TriggerType=${r.trigger}`,
        `RecordingType=${r.recordingType}`,
        'Complete=yes',
        'StorageType=SD',
        'MediaType=jpg',
      );
    }
    return lines.map((l) => `${l}\r\n`).join('');
  }

  /** The names below the camera's folder, or undefined (after answering) for a path the device refuses. */
  private namesBelowFolder(ctx: SimContext, path: string): string[] | undefined {
    const folder = this.folder(ctx);
    const rest = path === folder ? '' : path.startsWith(`${folder}/`) ? path.slice(folder.length + 1) : undefined;
    let valid = rest !== undefined;
    if (rest !== undefined && rest !== '') {
      try {
        STORAGE_PATH.parse(rest, 'directory');
      } catch {
        valid = false;
      }
    }
    if (!valid || rest === undefined) {
      sendText(ctx.res, 404, 'Not Found');
      return undefined;
    }
    return rest.split('/').filter((s) => s !== '');
  }

  /** `Total <n>` and one ls-style line per entry (spec 4.11). */
  private listing(ctx: SimContext): void {
    const names = this.namesBelowFolder(ctx, queryValue(ctx, 'directory') ?? '');
    if (!names) return;
    const entries = this.entries(names);
    if (!entries) {
      sendText(ctx.res, 404, 'Not Found');
      return;
    }
    const lines = [`Total ${entries.length}`, ...entries.map((e) => lsLine(e))];
    sendText(ctx.res, 200, lines.map((l) => `${l}\r\n`).join(''));
  }

  /** The entries of a folder: dates, hours of a date, records of an hour, files of a record. */
  private entries(names: string[]): Array<{ name: string; folder: boolean; size: number; time: string }> | undefined {
    const [date, hour, id, file] = names;
    if (file !== undefined || names.length > 3) return undefined;
    const within = this.records.filter((r) => (date === undefined || r.start.startsWith(`${date} `)) && (hour === undefined || r.start.slice(11, 13) === hour) && (id === undefined || String(r.id) === id));
    if (within.length === 0 && date !== undefined) return undefined;
    const unique = <T>(items: T[], key: (t: T) => string): T[] => items.filter((t, i) => items.findIndex((u) => key(u) === key(t)) === i);
    if (date === undefined) return unique(within, (r) => r.start.slice(0, 10)).map((r) => ({ name: r.start.slice(0, 10), folder: true, size: 4096, time: r.start }));
    if (hour === undefined) return unique(within, (r) => r.start.slice(11, 13)).map((r) => ({ name: r.start.slice(11, 13), folder: true, size: 4096, time: r.start }));
    if (id === undefined) return within.map((r) => ({ name: String(r.id), folder: true, size: 4096, time: r.start }));
    const record = within[0] as SimRecord;
    return RECORD_FILES.map((name) => ({ name, folder: false, size: this.file(record, name).length, time: record.stop }));
  }

  private file(record: SimRecord, name: string): Buffer {
    return name.endsWith('.xml') ? Buffer.from(RECORD_XML(record), 'utf8') : SNAPSHOT_JPEG;
  }

  /** `/ns/IPCamera<MAC>/<date>/<hour>/<record id>/<file>`: one record file. */
  private download(ctx: SimContext): void {
    let decoded: string;
    try {
      decoded = ctx.path.slice(NAS_PATH.length + 1).split('/').map((s) => decodeURIComponent(s)).join('/');
    } catch {
      sendText(ctx.res, 400, 'Bad Request');
      return;
    }
    const names = this.namesBelowFolder(ctx, decoded);
    if (!names) return;
    const [date, hour, id, file] = names;
    const record = this.records.find((r) => r.start.startsWith(`${date} `) && r.start.slice(11, 13) === hour && String(r.id) === id);
    if (names.length !== 4 || !record || file === undefined || !RECORD_FILES.includes(file)) {
      sendText(ctx.res, 404, 'Not Found');
      return;
    }
    sendBuffer(ctx.res, 200, this.file(record, file), file.endsWith('.xml') ? 'text/xml' : 'image/jpeg');
  }
}

function lsLine(e: { name: string; folder: boolean; size: number; time: string }): string {
  const month = MONTHS[Number(e.time.slice(5, 7)) - 1] ?? 'Jan';
  const day = String(Number(e.time.slice(8, 10))).padStart(2, ' ');
  const mode = e.folder ? 'drwxr-xr-x    2' : '-rw-r--r--    1';
  return `${mode} root     root     ${String(e.size).padStart(9, ' ')} ${month} ${day} ${e.time.slice(11, 16)} ${e.name}`;
}
