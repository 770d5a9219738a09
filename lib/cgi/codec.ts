import { deviceWords } from '../errors/echo';
import { IpcamError, inputError } from '../errors/errors';

/**
 * CGI interface text: request targets with every key and value percent-encoded (spec rule 3;
 * field notes: these devices had injection bugs, so nothing goes out raw), and `key=value` answers.
 */
export type CgiValue = string | number | boolean;

/**
 * Query parameters in order. A pair list keeps repeated keys (`move=left&move=repeat`); in an
 * object an array value repeats the key. `null` sends the bare key (`removeallpreset`);
 * `undefined` leaves the parameter out.
 */
export type CgiParams =
  | ReadonlyArray<readonly [string, CgiValue | null]>
  | Readonly<Record<string, CgiValue | null | undefined | ReadonlyArray<CgiValue>>>;

export function buildCgiPath(path: string, params?: CgiParams): string {
  const query = encodeQuery(params);
  return query === '' ? path : `${path}?${query}`;
}

export function encodeQuery(params: CgiParams | undefined): string {
  if (params === undefined) return '';
  // Built as it goes, without a list of parts or of entries: a relay pulse encodes one for every command.
  let query = '';
  let first = true;
  const add = (pair: string): void => {
    query = first ? pair : `${query}&${pair}`;
    first = false;
  };
  if (isPairList(params)) {
    for (const [key, value] of params) add(encodePair(key, value));
  } else {
    for (const key of Object.keys(params)) {
      const value = params[key];
      if (value === undefined) continue;
      if (Array.isArray(value)) for (const v of value as CgiValue[]) add(encodePair(key, v));
      else add(encodePair(key, value as CgiValue | null));
    }
  }
  return query;
}

function encodePair(key: string, value: CgiValue | null): string {
  return value === null ? encodeCgi(key) : `${encodeCgi(key)}=${encodeCgi(String(value))}`;
}

function isPairList(params: CgiParams): params is ReadonlyArray<readonly [string, CgiValue | null]> {
  return Array.isArray(params);
}

/** Encodes the reserved characters of spec rule 3, spaces, `%` and non-ASCII (UTF-8). */
export function encodeCgi(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    // Its only failure: a lone surrogate has no UTF-8 form. Refused, not crashed on.
    throw inputError('A value holds half of a character (a lone surrogate) and cannot be sent');
  }
}

/**
 * Parses `key=value` lines. The `root.` prefix is dropped (devices add it even when not asked),
 * `\r` is stripped, blank lines and lines without `=` are skipped. Order is kept. Keys and values
 * are trimmed of the spaces around them: field notes, some firmware writes
 * ` root.Group.Name = value `, and the devices' own client libraries trim both.
 */
export function parseKeyValues(body: string | Buffer): Map<string, string> {
  const text = typeof body === 'string' ? body : body.toString('utf8');
  const out = new Map<string, string>();
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\r/g, '');
    const eq = line.indexOf('=');
    if (eq <= 0) continue;
    const key = line.slice(0, eq).trim().replace(/^root\./, '');
    if (key === '') continue;
    out.set(key, line.slice(eq + 1).trim());
  }
  return out;
}

/**
 * Field notes: a parameter group the device lacks answers `# Error: Error -1 getting param in
 * group 'X'`, one line per group, before the groups it has. The device saying it lacks a group,
 * not a refusal.
 */
const MISSING_GROUP = /^#?\s*error\b[\s:]*error -1 getting param in group '([^'\r\n]*)'\s*$/i;

/** The group a missing-group line names, or undefined for any other line. */
export function missingGroupOf(line: string): string | undefined {
  return MISSING_GROUP.exec(line.replace(/\r/g, ''))?.[1];
}

/** An answer without its leading missing-group lines (`missingGroupOf`), and the groups they named. */
export function withoutMissingGroups(text: string): { missing: string[]; rest: string } {
  const missing: string[] = [];
  let at = 0;
  while (at < text.length) {
    const end = text.indexOf('\n', at);
    const line = text.slice(at, end === -1 ? text.length : end);
    const group = line.trim() === '' ? '' : missingGroupOf(line.trim());
    if (group === undefined) break;
    if (group !== '') missing.push(group);
    at = end === -1 ? text.length : end + 1;
  }
  return { missing, rest: text.slice(at) };
}

/** `# Error: ...` or `Error ...` opening an answer (field notes: errors come as HTTP 200 with such a line). */
const ERROR_LINE = /^#?\s*error\b[\s:]*/i;
/** The error lines seen on these devices, about a name the request carried. */
const KNOWN_ERROR = /^error (setting|adding|removing) '([^'\r\n]*)'$/i;

export interface CgiAnswerContext {
  /** What was asked, in our words, e.g. `parameter update`. */
  what: string;
  /** The names the request carried (checked before sending): an error line naming one is rebuilt from them. */
  names: readonly string[];
  /** What the device's own words must not hold to be shown (the client's `secrets`). */
  secrets: readonly string[];
}

/**
 * The `EDEVICE` an error line in a 200 answer stands for, or undefined when the answer is no
 * error line. A known line about a name we sent is told in our words; any other line is the
 * device's own words, shown one line, shortened, and only when it holds no secret.
 */
export function cgiFailure(body: string | Buffer, ctx: CgiAnswerContext): IpcamError | undefined {
  const head = (typeof body === 'string' ? body.slice(0, 1024) : body.subarray(0, 1024).toString('utf8')).trimStart();
  const prefix = ERROR_LINE.exec(head);
  if (!prefix) return undefined;
  const line = head.split(/\r?\n/, 1)[0] ?? '';
  const words = line.slice(prefix[0].length).trim();
  const known = KNOWN_ERROR.exec(words);
  const name = known && ctx.names.includes(known[2] as string) ? known[2] : undefined;
  const shown = name !== undefined ? `error ${(known?.[1] as string).toLowerCase()} '${name}'` : deviceWords(words, ctx.secrets);
  return new IpcamError('EDEVICE', `The device answered the ${ctx.what} with an error${shown ? `: ${shown}` : ''}`, {
    status: 200,
    ...(shown !== undefined && { deviceDesc: shown }),
  });
}
