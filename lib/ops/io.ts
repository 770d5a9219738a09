import { setTimeout as sleep } from 'node:timers/promises';
import { IpcamError, inputError } from '../errors/errors';
import { idList, isBlank, type Param } from '../input/params';
import type { DeviceClient } from '../transport/client';
import { buildCgiPath, parseKeyValues } from '../cgi/codec';
import { boundaryOf, MultipartParser } from '../cgi/multipart';
import { runOp } from './runner';
import { defineOp, type Operation } from './types';

export const IO_KINDS = ['input', 'output'] as const;
export type IoKind = (typeof IO_KINDS)[number];

/** One `IO<n>:<c>` line: `/` became active, `\` became inactive, `H`/`L` unchanged. */
export interface IoState {
  port: number;
  active: boolean;
  edge: 'rising' | 'falling' | null;
}

export interface DetectionLevel {
  group: number;
  level: number;
  threshold: number;
  /** The level has reached the threshold. */
  triggered: boolean;
}

const IO_CHARS: Record<string, Omit<IoState, 'port'>> = {
  '/': { active: true, edge: 'rising' },
  '\\': { active: false, edge: 'falling' },
  H: { active: true, edge: null },
  L: { active: false, edge: null },
};

/** Highest port or group number taken (the editors mirror it). */
export const MAX_ID = 999;

/**
 * Detection levels repeat about every second: this long without a byte, once the stream has
 * begun, means it stalled (ms). I/O monitors get no such timeout: they are quiet by nature.
 */
export const DETECTION_STALL_TIMEOUT = 30_000;

/** Ports and detection groups: ids 1 to `MAX_ID`, at most 64 in one request. */
export const IO_IDS = idList({ min: 1, max: MAX_ID, maxCount: 64 });

/** `'1,2'`, `[1, 2]` or `''` (all) to port or group numbers; anything else is `EINPUT`. */
export function parseIdList(value: unknown, what: string): number[] {
  return isBlank(value) ? [] : IO_IDS.parse(value, what);
}

function checkKind(kind: unknown): IoKind {
  if (kind !== 'input' && kind !== 'output') throw inputError(`Unknown I/O kind ${JSON.stringify(kind)}: use input or output`);
  return kind;
}

/** The multipart monitor stream of inputs or outputs (`monitor=` empty means all ports). */
export function ioMonitorPath(kind: IoKind, ports: number[]): string {
  return buildCgiPath(`/cgi-bin/admin/${checkKind(kind)}`, { monitor: ports.join(',') });
}

/** Every `IO<n>:<c>` line of a monitor part. */
export function parseIoLines(text: string): IoState[] {
  const states: IoState[] = [];
  for (const match of text.matchAll(/IO(\d+):([/\\HL])/g)) {
    states.push({ port: Number(match[1]), ...(IO_CHARS[match[2] as string] as Omit<IoState, 'port'>) });
  }
  return states;
}

/** What an I/O check asks: the kind and the ports, checked by the rules above. */
interface IoCheck {
  kind: IoKind;
  ports: number[];
}

const ioCheckParam: Param<IoCheck> = {
  limits: { type: 'object', fields: { kind: { type: 'oneOf', values: IO_KINDS }, ports: IO_IDS.limits } },
  parse(value) {
    const fields = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>;
    const kind = checkKind(fields['kind']);
    const ports = fields['ports'];
    if (!Array.isArray(ports) || ports.length === 0) throw inputError('Give the ports to check, e.g. 1,2');
    return { kind, ports: IO_IDS.parse(ports, 'Ports') };
  },
};

/** The answer of a `check` (`input1=1` lines) as states; nothing readable is `EPARSE`. */
function parseCheck(text: string, kind: IoKind): IoState[] {
  const states: IoState[] = [];
  for (const [key, value] of parseKeyValues(text)) {
    const port = /(\d+)$/.exec(key);
    if (!port || !/^[01]$/.test(value.trim())) continue;
    states.push({ port: Number(port[1]), active: value.trim() === '1', edge: null });
  }
  if (states.length === 0) throw new IpcamError('EPARSE', `The ${kind} check answered nothing readable`);
  return states;
}

/** Spec 4.4: the current states of inputs or outputs (`check`), on the control lane. */
export const ioCheck = defineOp({
  name: 'ioCheck',
  api: 'cgi',
  access: 'admin',
  class: 'read',
  summary: 'Reads the current state of inputs or outputs (check)',
  params: ioCheckParam,
  request: (p) => ({ path: `/cgi-bin/admin/${p.kind}`, query: { check: p.ports.join(',') }, control: true, what: `${p.kind} check` }),
  parse: (answer, p) => ({ payload: parseCheck(answer.text, p.kind) }),
});


/** Reads the current states with `check` (answers like `input1=1`). */
export function checkIo(client: DeviceClient, kind: IoKind, ports: number[], signal?: AbortSignal): Promise<IoState[]> {
  return runOp(client, ioCheck, { kind, ports }, { signal });
}

/** One message of an input monitor: a state, and whether it was found by reading the state rather than reported as an edge. */
export interface IoReport {
  state: IoState;
  resync: boolean;
}

/**
 * The last reported state of each port of a monitor, so that a flow hears of each change once,
 * whatever the stream did: the first report of a port has `edge: null`; after that only changes
 * give a report. States come from two places: the stream (`/` and `\` edges, `H`/`L` states, in
 * the order the device sent them) and a `check` read after each (re)connect, whose answer races
 * the stream's parts. Stream parts that arrive while a read is out, or within `settle` ms of its
 * answer, are at least as new as the read: the read is not applied to their ports.
 */
export class IoEdgeTracker {
  private readonly known = new Map<number, { active: boolean; read: boolean }>();
  /** Ports the stream spoke of since the running read began. */
  private fresh: Set<number> | undefined;
  private generation = 0;

  /** `settle`: how long after a read's answer stream parts may still be older than it (ms). */
  constructor(private readonly settle = 200) {}

  /** What to `check` on a (re)connect: the ports set, else those seen so far, else port 1. */
  portsToRead(configured: number[]): number[] {
    if (configured.length > 0) return configured;
    const seen = [...this.known.keys()].sort((a, b) => a - b);
    return seen.length > 0 ? seen : [1];
  }

  /** The lines of one monitor part. */
  fromStream(states: IoState[]): IoReport[] {
    const reports: IoReport[] = [];
    for (const state of states) {
      if (state.port < 1 || state.port > MAX_ID) continue;
      this.fresh?.add(state.port);
      const before = this.known.get(state.port);
      if (state.edge === null) {
        this.learn(state.port, state.active, true, reports);
        continue;
      }
      if (before?.active === state.active) {
        // Already in the state this edge leads to. A read had seen the change already: nothing
        // new. After an edge the opposite edge was missed: report it first, found on resync.
        if (before.read) continue;
        reports.push({ state: { port: state.port, active: !state.active, edge: edgeTo(!state.active) }, resync: true });
      }
      this.known.set(state.port, { active: state.active, read: false });
      reports.push({ state, resync: false });
    }
    return reports;
  }

  /**
   * Reads the current states (`read` sends the `check`) and gives what differs from what was
   * last reported. A newer read makes an older one give nothing.
   */
  async resync(read: () => Promise<IoState[]>, signal?: AbortSignal): Promise<IoReport[]> {
    const generation = ++this.generation;
    const fresh = new Set<number>();
    this.fresh = fresh;
    try {
      const states = await read();
      await sleep(this.settle, undefined, { signal });
      if (generation !== this.generation) return [];
      const reports: IoReport[] = [];
      for (const state of states) if (!fresh.has(state.port) && state.port >= 1 && state.port <= MAX_ID) this.learn(state.port, state.active, true, reports);
      return reports;
    } finally {
      if (this.fresh === fresh) this.fresh = undefined;
    }
  }

  /** A state read (an `H`/`L` line or a `check` answer): a report only when it differs. */
  private learn(port: number, active: boolean, read: boolean, reports: IoReport[]): void {
    const before = this.known.get(port);
    this.known.set(port, { active, read });
    if (before?.active === active) return;
    reports.push({ state: { port, active, edge: before === undefined ? null : edgeTo(active) }, resync: true });
  }
}

function edgeTo(active: boolean): 'rising' | 'falling' {
  return active ? 'rising' : 'falling';
}

export const DETECTION_TYPES = ['motion', 'audio'] as const;
export type DetectionType = (typeof DETECTION_TYPES)[number];
/** How a detection node reads: a stream it keeps open, or one reading per input message. */
export const DETECTION_MODES = ['stream', 'single'] as const;
/** Which of a stream's readings a detection node sends: all, those that changed, or those that flip a trigger. */
export const DETECTION_EMITS = ['every', 'change', 'trigger'] as const;
export type DetectionEmit = (typeof DETECTION_EMITS)[number];

export function detectionPath(type: DetectionType, groups: number[], single: boolean): string {
  if (type !== 'motion' && type !== 'audio') throw inputError(`Unknown detection ${JSON.stringify(type)}: use motion or audio`);
  return buildCgiPath('/cgi-bin/admin/detection', { type, group: groups.length > 0 ? groups.join(',') : undefined, mode: single ? 'single' : undefined });
}

/**
 * `group=<n>;level=<n>;threshold=<n>;` lines, lowest group first. A field is `name=value` with
 * one `=`, both trimmed; the last of a name counts; a line without the three numbers is skipped.
 * Runs on every part of every detection stream, about once a second per device, for as long as
 * the flow runs: it slices lines and fields instead of splitting them into arrays of arrays.
 */
export function parseLevels(text: string): DetectionLevel[] {
  const levels: DetectionLevel[] = [];
  let ordered = true;
  for (let start = 0; start <= text.length; ) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    const level = levelOf(text.slice(start, end > start && text.charCodeAt(end - 1) === 13 ? end - 1 : end));
    if (level) {
      const previous = levels[levels.length - 1];
      if (previous && level.group < previous.group) ordered = false;
      levels.push(level);
    }
    start = end + 1;
  }
  // A sorted list is what a stable sort would give back: sort only when the device did not.
  return ordered ? levels : levels.sort((a, b) => a.group - b.group);
}

function levelOf(line: string): DetectionLevel | undefined {
  let group: string | undefined;
  let level: string | undefined;
  let threshold: string | undefined;
  for (let start = 0; start < line.length; ) {
    let end = line.indexOf(';', start);
    if (end < 0) end = line.length;
    const field = line.slice(start, end);
    start = end + 1;
    const eq = field.indexOf('=');
    if (eq < 0 || field.indexOf('=', eq + 1) >= 0) continue;
    const name = field.slice(0, eq).trim();
    if (name === 'group') group = field.slice(eq + 1).trim();
    else if (name === 'level') level = field.slice(eq + 1).trim();
    else if (name === 'threshold') threshold = field.slice(eq + 1).trim();
  }
  if (group === undefined) return undefined;
  const g = Number(group);
  const l = Number(level);
  const t = Number(threshold);
  if (!Number.isFinite(g) || !Number.isFinite(l) || !Number.isFinite(t)) return undefined;
  return { group: g, level: l, threshold: t, triggered: l >= t };
}

/** `mode=single` answers one part (a multipart body, or plain text on some firmware). */
function firstPartLevels(body: Buffer, contentType: string): DetectionLevel[] {
  const boundary = boundaryOf(contentType);
  if (!boundary) return parseLevels(body.toString('latin1'));
  let first: Buffer | undefined;
  const parser = new MultipartParser(boundary, { onPart: (p) => (first ??= p.body) });
  parser.write(body);
  parser.flush();
  if (!first) throw new IpcamError('EPARSE', 'The detection answer held no reading');
  return parseLevels(first.toString('latin1'));
}

const detectionParam: Param<{ type: DetectionType; groups: number[] }> = {
  limits: { type: 'object', fields: { type: { type: 'oneOf', values: DETECTION_TYPES }, groups: IO_IDS.limits } },
  parse(value) {
    const fields = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>;
    const type = fields['type'];
    if (type !== 'motion' && type !== 'audio') throw inputError(`Unknown detection ${JSON.stringify(type)}: use motion or audio`);
    return { type, groups: parseIdList(fields['groups'], 'Groups') };
  },
};

/** One reading of the detection levels (`mode=single`). */
export const detectionReading = defineOp({
  name: 'detectionReading',
  api: 'cgi',
  access: 'admin',
  class: 'read',
  summary: 'Reads the motion or audio detection levels once',
  params: detectionParam,
  request: (p) => ({ path: detectionPath(p.type, p.groups, true), what: 'detection reading' }),
  parse: (answer) => ({ payload: firstPartLevels(answer.body, answer.contentType) }),
});

/** The I/O calls of the nodes (input monitor, relay check, detection reading), run by the one runner; not offered by ipcam-request. */
export const IO_OPERATIONS: readonly Operation[] = [ioCheck, detectionReading];

export function readDetection(client: DeviceClient, type: DetectionType, groups: number[], signal?: AbortSignal): Promise<DetectionLevel[]> {
  return runOp(client, detectionReading, { type, groups }, { signal });
}
