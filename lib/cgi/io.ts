import { IpcamError, inputError } from '../errors';
import type { DeviceClient } from '../transport/client';
import { buildCgiPath, parseKeyValues } from './codec';

export type IoKind = 'input' | 'output';

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

/** `'1,2'`, `[1, 2]` or `''` (all) to port or group numbers; anything else is `EINPUT`. */
export function parseIdList(value: unknown, what: string): number[] {
  if (value === undefined || value === null || value === '') return [];
  const parts = Array.isArray(value) ? value.map(String) : String(value).split(',');
  const ids = parts.map((p) => p.trim()).filter((p) => p !== '');
  if (ids.some((p) => !/^\d+$/.test(p) || Number(p) < 1 || Number(p) > 999)) throw inputError(`${what} must be numbers like 1,2; got ${JSON.stringify(value)}`);
  return [...new Set(ids.map(Number))];
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

/** Reads the current states with `check` (answers like `input1=1`). */
export async function checkIo(client: DeviceClient, kind: IoKind, ports: number[], signal?: AbortSignal): Promise<IoState[]> {
  if (ports.length === 0) throw inputError('Give the ports to check, e.g. 1,2');
  const res = await client.request({ path: buildCgiPath(`/cgi-bin/admin/${checkKind(kind)}`, { check: ports.join(',') }), signal });
  const states: IoState[] = [];
  for (const [key, value] of parseKeyValues(res.body)) {
    const port = /(\d+)$/.exec(key);
    if (!port || !/^[01]$/.test(value.trim())) continue;
    states.push({ port: Number(port[1]), active: value.trim() === '1', edge: null });
  }
  if (states.length === 0) throw new IpcamError('EPARSE', `The ${kind} check answered nothing readable`);
  return states;
}

export type DetectionType = 'motion' | 'audio';

export function detectionPath(type: DetectionType, groups: number[], single: boolean): string {
  if (type !== 'motion' && type !== 'audio') throw inputError(`Unknown detection ${JSON.stringify(type)}: use motion or audio`);
  return buildCgiPath('/cgi-bin/admin/detection', { type, group: groups.length > 0 ? groups.join(',') : undefined, mode: single ? 'single' : undefined });
}

/** `group=<n>;level=<n>;threshold=<n>;` lines, lowest group first. */
export function parseLevels(text: string): DetectionLevel[] {
  const levels: DetectionLevel[] = [];
  for (const line of text.split(/\r?\n/)) {
    const fields = Object.fromEntries(
      line
        .split(';')
        .map((f) => f.split('=').map((s) => s.trim()))
        .filter((kv) => kv.length === 2),
    ) as Record<string, string>;
    const group = Number(fields['group']);
    const level = Number(fields['level']);
    const threshold = Number(fields['threshold']);
    if ([group, level, threshold].every((n) => Number.isFinite(n)) && fields['group'] !== undefined) {
      levels.push({ group, level, threshold, triggered: level >= threshold });
    }
  }
  return levels.sort((a, b) => a.group - b.group);
}
