/**
 * Every status a node shows, in one vocabulary: DESIGN's words (working, connecting, retrying at a
 * time, failed with code and reason, idle/stopped) and the result each node shows, each with its
 * colour and shape. Three things read it: the nodes (every `node.status` is made here), the help
 * (scripts/build.js writes each node's "Status:" line from the words its folder's spec names), and
 * the tests (every status a deployed node shows must be one of its spec's words). A word a node
 * shows without it in its spec fails the tests; one changed here changes the help with it.
 *
 * DESIGN's colours only: green dot (working, a result), yellow ring (on its way: connecting,
 * retrying, a request or search under way), red ring (failed), grey ring (idle, stopped).
 * Plain objects: nothing here knows Node-RED.
 */
import { oneLine } from '../errors/echo';
import type { IpcamError } from '../errors/errors';
import type { EventServerState } from '../events/server';
import type { HealthState } from '../health/device-health';
import { isDeviceFailure, type DeviceLabel } from '../errors/refusal';
import type { StreamState, StreamStateInfo } from '../stream/supervisor';

export type StatusFill = 'green' | 'yellow' | 'red' | 'grey';
export type StatusShape = 'dot' | 'ring';

export interface Status {
  fill: StatusFill;
  shape: StatusShape;
  text: string;
}

/** What a node shows with no status of its own (closed, or a device's state not known yet). */
export type NoStatus = Record<string, never>;

/** Longest status text (DESIGN: status rule); a longer one is cut with an ellipsis. */
export const STATUS_MAX = 32;
/** Longest device name or host in a failure's text, before the cut. */
const LABEL_MAX = 40;
const ELLIPSIS = '\u2026';

/** A status text of at most STATUS_MAX characters, an ellipsis marking a cut: the one cut. */
export function cutStatus(text: string): string {
  const line = oneLine(text, STATUS_MAX * 4);
  return line.length <= STATUS_MAX ? line : `${line.slice(0, STATUS_MAX - 1).trimEnd()}${ELLIPSIS}`;
}

/** `HH:MM:SS` in this host's local time, the one clock of every status (`--:--:--` for no valid time). */
export function clock(at: number | string | Date = Date.now()): string {
  const date = new Date(at);
  if (Number.isNaN(date.getTime())) return '--:--:--';
  const two = (n: number): string => String(n).padStart(2, '0');
  return `${two(date.getHours())}:${two(date.getMinutes())}:${two(date.getSeconds())}`;
}

const CLOCK = String.raw`(\d\d:\d\d:\d\d|--:--:--)`;

/** One word of the vocabulary: its colour and shape, every text it may show, and one for the help. */
export interface StatusWord {
  fill: StatusFill;
  shape: StatusShape;
  /** Every text the word can produce (before the cut: a cut text matches up to its ellipsis). */
  pattern: RegExp;
  /** What the help shows. */
  example: string;
}

function word(fill: StatusFill, shape: StatusShape, pattern: RegExp | string, example?: string): StatusWord {
  const literal = typeof pattern === 'string';
  return { fill, shape, pattern: literal ? new RegExp(`^${pattern.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}$`) : pattern, example: example ?? (literal ? pattern : '') };
}

export const STATUS_WORDS = {
  // --- a device's state, shown by a node with no result of its own
  online: word('green', 'dot', 'online'),
  offline: word('red', 'ring', 'offline'),
  authFailed: word('red', 'ring', 'auth failed'),
  // --- requests
  requesting: word('yellow', 'ring', 'requesting'),
  progress: word('yellow', 'ring', /^.+ \d{1,3}%$/, 'upload 40%'),
  failed: word('red', 'ring', /^E[A-Z]+( \S+)?: .+$/, "EINPUT: key 'stat'"),
  // --- streams
  connecting: word('yellow', 'ring', /^connecting( \(\d+\))?$/, 'connecting'),
  connected: word('green', 'dot', 'connected'),
  retrying: word('yellow', 'ring', new RegExp(`^retry( \\d+)? at ${CLOCK}$`), 'retry 3 at 12:34:56'),
  notAnswering: word('yellow', 'ring', 'device not answering'),
  authWait: word('red', 'ring', /^auth failed, \d+ min$/, 'auth failed, 5 min'),
  unsupported: word('red', 'ring', 'not supported'),
  stopped: word('grey', 'ring', 'stopped'),
  ioEvent: word('green', 'dot', new RegExp(`^IO\\d+ (on|off) ${CLOCK}$`), 'IO1 on 12:34:56'),
  levelEvent: word('green', 'dot', new RegExp(`^(alarm|level) \\d+ ${CLOCK}$`), 'level 40 12:34:56'),
  levelsRead: word('green', 'dot', new RegExp(`^\\d+ groups ${CLOCK}$`), '4 groups 12:34:56'),
  // --- a setting that keeps the node from working (a red ring of fixed words)
  noDevice: word('red', 'ring', 'no device'),
  noServer: word('red', 'ring', 'no server'),
  noBroker: word('red', 'ring', 'no broker'),
  badSetting: word('red', 'ring', /^bad (setting|server setting|list filter|group filter)$/, 'bad setting'),
  // --- results
  image: word('green', 'dot', /^\d+\.\d kB$/, '86.4 kB'),
  operationDone: word('green', 'dot', /^(\d+(\.\d)? k?B|\d+ (of \d+|items|names|entries|bytes)|\w+ ok|done)$/, '10 of 40'),
  ptzDone: word('green', 'dot', /^(\w+|\d+ (presets|tours))$/, 'Left'),
  relayOn: word('green', 'dot', /^relay \d+ (on|pulsed)$/, 'relay 1 on'),
  relayOff: word('grey', 'ring', /^relay \d+ (off|pulsed)$/, 'relay 1 off'),
  platesDone: word('green', 'dot', /^\d+ (added|deleted)$/, '3 added'),
  platesPartly: word('yellow', 'ring', /^\d+\/\d+ (added|deleted)$/, '2/3 added'),
  platesFound: word('green', 'dot', /^\d+ of \d+$/, '50 of 230'),
  plateModified: word('green', 'dot', 'modified'),
  synced: word('green', 'dot', /^\+\d+ ~\d+ -\d+$/, '+2 ~1 -3'),
  syncPlanned: word('green', 'dot', /^plan \+\d+ ~\d+ -\d+$/, 'plan +2 ~1 -3'),
  syncPartly: word('yellow', 'ring', /^\+\d+ ~\d+ -\d+ !\d+$/, '+2 ~1 -3 !1'),
  vehicleConfig: word('green', 'dot', /^(read|changed)$/, 'read'),
  searching: word('yellow', 'ring', /^searching \d+ s$/, 'searching 5 s'),
  found: word('green', 'dot', /^\d+ found( \(limit\))?$/, '3 found'),
  devicesUp: word('green', 'dot', /^\d+ online, 0 down$/, '2 online, 0 down'),
  devicesDown: word('red', 'ring', /^\d+ online, \d+ down$/, '1 online, 1 down'),
  devicesUnknown: word('grey', 'ring', /^\d+ online, 0 down$/, '0 online, 0 down'),
  noDevices: word('grey', 'ring', 'no devices'),
  starting: word('yellow', 'ring', 'starting'),
  listening: word('green', 'dot', 'listening'),
  listenFailed: word('red', 'ring', /^(listen failed|port in use|port not allowed)$/, 'port in use'),
  alive: word('green', 'dot', new RegExp(`^alive ${CLOCK}$`), 'alive 12:34:56'),
  plateSeen: word('green', 'dot', new RegExp(`^[^]{1,12} ${CLOCK}$`), 'ABC123 12:34:56'),
  brokerConnecting: word('yellow', 'ring', 'broker connecting'),
  brokerDown: word('red', 'ring', /^broker( disconnected|: auto-connect off)$/, 'broker disconnected'),
  // --- the Dashboard widgets
  viewing: word('green', 'dot', /^\d+ viewing$/, '2 viewing'),
  nobodyViewing: word('grey', 'ring', 'nobody viewing'),
  paused: word('grey', 'ring', 'paused'),
  resumed: word('green', 'dot', 'resumed'),
  lastPlate: word('green', 'dot', /^[^]{1,20}$/, 'ABC123'),
  noDashboard: word('red', 'ring', /^needs (Dashboard 2|a Dashboard 2 group)$/, 'needs Dashboard 2'),
  haActivity: word('green', 'dot', new RegExp(`^(relay \\d+ (on|off|pulsed)|plate \\w+|[^]{1,12}) ${CLOCK}$`), 'relay 1 on 12:34:56'),
} satisfies Record<string, StatusWord>;

export type StatusWordName = keyof typeof STATUS_WORDS;

function make(name: StatusWordName, text: string = STATUS_WORDS[name].example): Status {
  const { fill, shape } = STATUS_WORDS[name];
  return { fill, shape, text: cutStatus(text) };
}

/** The words shared by every node that sends requests to a device (the action nodes). */
export const ACTION_WORDS: readonly StatusWordName[] = ['online', 'offline', 'authFailed', 'requesting', 'failed'];
/** The words shared by the nodes that hold a stream open (input monitor, detection stream). */
export const STREAM_WORDS: readonly StatusWordName[] = ['connecting', 'connected', 'retrying', 'notAnswering', 'authWait', 'unsupported', 'stopped', 'failed'];


/**
 * The word of `words` (a node's, from its spec) that `status` is; `cleared` for an empty status
 * (every node's, when it closes); undefined for a status none of those words makes.
 */
export function statusWordOf(words: readonly StatusWordName[], status: Partial<Status>): StatusWordName | 'cleared' | undefined {
  if (status.fill === undefined && status.shape === undefined && status.text === undefined) return 'cleared';
  const text = status.text ?? '';
  if (text.length > STATUS_MAX) return undefined;
  return words.find((name) => {
    const w = STATUS_WORDS[name];
    return w.fill === status.fill && w.shape === status.shape && w.pattern.test(text);
  });
}

// ---------------------------------------------------------------------------------------------
// The words, as the nodes say them

export const cleared = (): NoStatus => ({});

/** A device's state: what a node shows when it is not showing a result of its own. Unknown: nothing. */
export function deviceState(state: HealthState): Status | NoStatus {
  switch (state) {
    case 'online':
      return make('online');
    case 'offline':
      // A failure, not an idle node (grey): red, as DESIGN's status rules have failures.
      return make('offline');
    case 'auth-failed':
      return make('authFailed');
    case 'unknown':
      return {};
  }
}

export const requesting = (): Status => make('requesting');
/** A long operation on its way: `upload 40%`. */
export const progress = (stage: string, percent: number): Status => make('progress', `${stage} ${percent}%`);

/**
 * DESIGN's "failed with code and reason": `EINPUT: key 'stat'`, `EAUTH: Front gate cam`,
 * `EHTTP 503: Front gate cam`. A device's failure names the device (its name, else its host).
 */
export function failed(err: IpcamError, device?: DeviceLabel): Status {
  const code = err.code === 'EHTTP' && err.status !== undefined ? `EHTTP ${err.status}` : err.code === 'EDEVICE' && err.deviceCode !== undefined ? `EDEVICE ${err.deviceCode}` : err.code;
  const label = device ? oneLine(device.name || device.host || '', LABEL_MAX) : '';
  const reason = !isDeviceFailure(err) ? (err.brief ?? err.message) : label !== '' ? label : (err.brief ?? err.message);
  return make('failed', `${code}: ${oneLine(reason, STATUS_MAX * 2)}`);
}

/** A stream's state: connecting, connected, `retry 3 at 12:34:56`, stopped... */
export function streamState(state: StreamState, info: StreamStateInfo): Status {
  switch (state) {
    case 'connecting':
      return make('connecting', info.attempt ? `connecting (${info.attempt})` : 'connecting');
    case 'connected':
      return make('connected');
    case 'retrying':
      // When the next try is, rather than a wait that would need a timer per node to count down.
      return make('retrying', `retry${info.attempt ? ` ${info.attempt}` : ''} at ${clock(info.at ?? Date.now())}`);
    case 'waiting':
      return make('notAnswering');
    case 'auth-failed':
      return make('authWait', `auth failed, ${Math.round((info.delay ?? 0) / 60000)} min`);
    case 'unsupported':
      return make('unsupported');
    case 'stopped':
      return make('stopped');
  }
}

export const stopped = (): Status => make('stopped');
export const ioEvent = (port: number | string, active: boolean, at?: number): Status => make('ioEvent', `IO${port} ${active ? 'on' : 'off'} ${clock(at)}`);
/** `alarm 100 12:34:56` at most: 'triggered' would push the clock out of a short text. */
export const levelEvent = (triggered: boolean, level: number, at?: number): Status => make('levelEvent', `${triggered ? 'alarm' : 'level'} ${level} ${clock(at)}`);
export const levelsRead = (groups: number, at?: number): Status => make('levelsRead', `${groups} groups ${clock(at)}`);

export const noDevice = (): Status => make('noDevice');
export const noServer = (): Status => make('noServer');
export const noBroker = (): Status => make('noBroker');
export const badSetting = (what?: 'server setting' | 'list filter' | 'group filter'): Status => make('badSetting', what ? `bad ${what}` : 'bad setting');

export const image = (bytes: number): Status => make('image', `${(bytes / 1024).toFixed(1)} kB`);
/** A result of an operation table: `12 of 40`, `8.6 kB`, `4 names`, `readClimate ok`. */
export const operationDone = (text: string): Status => make('operationDone', text);
export const ptzDone = (action: string): Status => make('ptzDone', action);
export const ptzList = (count: number, kind: 'presets' | 'tours'): Status => make('ptzDone', `${count} ${kind}`);
/** A relay's result: green when it is (or ends) on, grey (idle) when off. */
export const relayDone = (output: number | string, active: boolean, pulsed: boolean): Status => make(active ? 'relayOn' : 'relayOff', `relay ${output} ${pulsed ? 'pulsed' : active ? 'on' : 'off'}`);
/** A batch of plates: `3 added`, or `2/3 added` (yellow) when the device refused some. */
export const platesDone = (done: number, total: number, verb: 'added' | 'deleted'): Status =>
  done === total ? make('platesDone', `${total} ${verb}`) : make('platesPartly', `${done}/${total} ${verb}`);
export const platesFound = (count: number, total: number): Status => make('platesFound', `${count} of ${total}`);
export const plateModified = (): Status => make('plateModified');
/** A sync: `+2 ~1 -3`, `plan +2 ~1 -3` after a dry run, `+2 ~1 -3 !1` (yellow) with plates refused. */
export function synced(counts: { added: number; modified: number; removed: number; failed: number }, dryRun: boolean): Status {
  const summary = `+${counts.added} ~${counts.modified} -${counts.removed}`;
  if (counts.failed > 0) return make('syncPartly', `${summary} !${counts.failed}`);
  return dryRun ? make('syncPlanned', `plan ${summary}`) : make('synced', summary);
}
export const vehicleConfig = (changed: boolean): Status => make('vehicleConfig', changed ? 'changed' : 'read');
export const searching = (seconds: number): Status => make('searching', `searching ${seconds} s`);
export const found = (count: number, limited: boolean): Status => make('found', `${count} found${limited ? ' (limit)' : ''}`);

/** The summary of every device: green when all are online, red with any down, grey (idle) while some are not known yet. */
export function devicesSummary(online: number, down: number, total: number): Status {
  if (total === 0) return make('noDevices');
  const text = `${online} online, ${down} down`;
  return make(down > 0 ? 'devicesDown' : online === total ? 'devicesUp' : 'devicesUnknown', text);
}

/** An event server's state as a plate-event node shows it. */
export function listenerState(state: EventServerState, detail?: string): Status {
  switch (state) {
    case 'starting':
      return make('starting');
    case 'listening':
      return make('listening');
    case 'closed':
      return make('stopped');
    case 'failed':
      return make('listenFailed', !detail ? 'listen failed' : detail.includes('in use') ? 'port in use' : detail.includes('Permission') ? 'port not allowed' : 'listen failed');
  }
}
export const alive = (at: number | string): Status => make('alive', `alive ${clock(at)}`);
export const plateSeen = (plate: string, at: number | string): Status => make('plateSeen', `${plate.slice(0, 10)} ${clock(at)}`);

export function brokerState(state: 'connecting' | 'disconnected', autoConnect: boolean): Status {
  return state === 'connecting' ? make('brokerConnecting') : make('brokerDown', autoConnect ? 'broker disconnected' : 'broker: auto-connect off');
}
/** Home Assistant's last command or plate, and when: `relay 1 on 12:34:56`. */
export const haActivity = (what: string, at?: number): Status => make('haActivity', `${what.slice(0, 20)} ${clock(at)}`);
export const connected = (): Status => make('connected');

/** A camera widget: how many look at it (it fetches frames only while someone does), or paused. */
export const viewing = (viewers: number): Status => (viewers > 0 ? make('viewing', `${viewers} viewing`) : make('nobodyViewing'));
export const paused = (isPaused: boolean): Status => (isPaused ? make('paused') : make('resumed'));
/** A widget without Dashboard 2, or without a group of it: it takes no part. */
export const noDashboard = (hasGroup: boolean): Status => make('noDashboard', hasGroup ? 'needs Dashboard 2' : 'needs a Dashboard 2 group');
/** A plates widget: the newest plate it shows. */
export const lastPlate = (plate: string): Status => make('lastPlate', plate.slice(0, 20));

// ---------------------------------------------------------------------------------------------
// The help

const esc = (t: string): string => t.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The "Status:" line of a node's help, from its spec's words: `green dot <i>3 added</i>, ...`. */
export function statusHelp(names: readonly StatusWordName[]): string {
  if (names.length === 0) throw new Error('a Status line needs the words of the node');
  const groups = new Map<string, string[]>();
  for (const name of names) {
    const w = STATUS_WORDS[name];
    const key = `${w.fill} ${w.shape}`;
    groups.set(key, [...(groups.get(key) ?? []), `<i>${esc(w.example)}</i>`]);
  }
  const order = ['green dot', 'yellow ring', 'red ring', 'grey ring'];
  const listed = [...groups].sort(([a], [b]) => order.indexOf(a) - order.indexOf(b));
  return `Status: ${listed.map(([key, examples]) => `${key} ${examples.join(', ')}`).join('; ')}.`;
}
