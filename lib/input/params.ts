/**
 * The one parameter vocabulary: every value a flow gives passes one of these checks before it is
 * sent to a device. Low-level checks (`checkText`, `checkWhole`) serve the hand-written
 * operations; the typed parsers below (`int`, `oneOf`, `idList`, `text`, `dateTime`, `bool`,
 * `buffer`, `shape`, ...) serve the operation table, and each exposes its limits as data
 * (`limits`), which the editor rules file and the simulator take from here. Every failure is
 * `EINPUT` naming the field, thrown before anything is sent.
 */
import { inputError } from '../errors/errors';
import { echo, LINE_BREAKER, LONE_SURROGATE } from '../errors/echo';
import { unknownKey } from './suggest';

/** Characters XML 1.0 cannot carry: controls other than tab, LF and CR, U+FFFE/U+FFFF, lone surrogates. */
const NOT_XML = /[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]/u;
/** C0 controls and DEL except tab: what breaks the line-based `key=value` answers of the CGI interface. */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL_BUT_TAB = /[\u0000-\u0008\u000a-\u001f\u007f]/u;
/** C0 controls and DEL except tab, LF and CR: text of several lines (a file's content). */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL_BUT_LINES = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/u;
const KIND_TEXT = { line: 'one line of text', value: 'text without line breaks', multiline: 'text' } as const;

/**
 * Characters a POSIX shell acts on: separators, pipes, substitution, redirection, quotes,
 * escapes, globs, braces, history, comments, home. Field notes: servetest (and some parameters)
 * had command-injection bugs, so a name, user or path that may reach a device's command line
 * holds none of them (`shell: 'name'`).
 */
export const SHELL_CHARACTERS = ';|&$`<>\'"\\*?(){}[]!#~';
/**
 * What a password may not hold (`shell: 'secret'`): the characters with which a value ends its
 * word and runs or redirects something (`;` `|` `&` `$` backtick `(` `)` `<` `>` backslash and
 * quotes). A newline or other control character is refused in every one-line text already. Globs,
 * braces, `!`, `#` and `~` run nothing and are common in passwords: they stay allowed.
 */
export const SECRET_SHELL_CHARACTERS = ';|&$`<>\'"\\()';
/** Why the shell characters are refused, in the error and the help. */
export const SHELL_WHY = 'a shell acts on them, and these devices have run such values in a command line';
/** A word that starts with a dash: a command line reads it as an option (`-o remount`, `--help`). */
const OPTION_WORD = /(?:^|\s)-/u;

/** The first character XML 1.0 cannot carry, or undefined when the text is fit for an XML document. */
export function notXmlChar(text: string): string | undefined {
  return NOT_XML.exec(text)?.[0];
}

export interface TextRule {
  /** What the value is, for the error text (e.g. `Plate owner`). */
  what: string;
  /** Most characters (code points). */
  max: number;
  /** Least characters after trimming (default 1: not blank). */
  min?: number;
  /**
   * `line` (default): one line, no control character at all (names, plate numbers, owners);
   * `value`: tab allowed, no other control character (CGI parameter values, read back line by line).
   */
  kind?: 'line' | 'value' | 'multiline';
  /** Goes into an XML document: XML 1.0 characters only (line text has none of the others anyway). */
  xml?: boolean;
  /** Characters the place forbids besides controls, e.g. `~` in a CGI preset name. */
  forbid?: string;
  /** Why `forbid` is refused, for the error text. */
  forbidWhy?: string;
  /** No word may start with a dash: a command line would read it as an option. */
  noOption?: boolean;
  /** A password or other secret: never echoed in an error text. */
  secret?: boolean;
}

/** Checks text for its place; numbers are taken as their decimal text. Returns the text unchanged. */
export function checkText(value: unknown, rule: TextRule): string {
  const text = typeof value === 'number' && Number.isFinite(value) ? String(value) : value;
  if (typeof text !== 'string') throw inputError(`${rule.what} must be text, got ${echo(value)}`);
  // Length first: no other work is done on a 10 MB string.
  if (text.length > rule.max && (text.length > 2 * rule.max || codePoints(text) > rule.max)) {
    throw inputError(`${rule.what} must be at most ${rule.max} characters, got ${text.length > 2 * rule.max ? text.length : codePoints(text)}`);
  }
  if (text.trim().length < (rule.min ?? 1)) throw inputError(`${rule.what} is empty`);
  const shown = rule.secret ? '(hidden)' : echo(text);
  if (LONE_SURROGATE.test(text)) throw inputError(`${rule.what} ${shown} holds half of a character (a lone surrogate)`);
  const kind = rule.kind ?? 'line';
  const control = (kind === 'line' ? LINE_BREAKER : kind === 'value' ? CONTROL_BUT_TAB : CONTROL_BUT_LINES).exec(text)?.[0];
  if (control !== undefined) throw inputError(`${rule.what} ${shown} holds a control character (${codeOf(control)}): it must be ${KIND_TEXT[kind]}`);
  const notXml = rule.xml ? notXmlChar(text) : undefined;
  if (notXml !== undefined) throw inputError(`${rule.what} ${shown} holds ${codeOf(notXml)}, which XML 1.0 cannot carry`);
  const forbidden = rule.forbid === undefined ? undefined : [...rule.forbid].find((c) => text.includes(c));
  if (forbidden !== undefined) {
    const why = rule.forbidWhy === undefined ? '' : `: ${rule.forbidWhy}`;
    // A secret's own character is not named: the set is.
    throw inputError(rule.secret ? `${rule.what} must hold none of ${rule.forbid ?? ''}${why}` : `${rule.what} must not contain ${echo(forbidden)}${why}`);
  }
  if (rule.noOption && OPTION_WORD.test(text)) {
    throw inputError(`${rule.what} ${shown} must not start a word with a dash: the device's command line would read it as an option`);
  }
  return text;
}

/**
 * A whole number from `min` to `max`: a number, or its decimal digits as text (spaces around
 * allowed). `1e20`, `2.5`, `NaN`, `'0x10'` and anything out of range are `EINPUT`.
 */
export function checkWhole(value: unknown, what: string, min: number, max: number): number {
  const n = typeof value === 'string' && NUMERIC.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < min || n > max) {
    throw inputError(`${what} must be a whole number from ${min} to ${max}, got ${echo(value)}`);
  }
  return n;
}

/** The one rule for numbers given as text, everywhere: decimal digits, an optional minus, spaces around. */
const NUMERIC = /^\s*-?\d{1,16}\s*$/;

/** The number of characters (code points) of `text`; a pair of surrogates is one. */
function codePoints(text: string): number {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    }
    count++;
  }
  return count;
}

function codeOf(char: string): string {
  return `U+${(char.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
}

// ---------------------------------------------------------------------------------------------
// Typed parsers: each takes unknown input and gives a typed value or EINPUT naming the field, and
// carries its limits as data (JSON-safe) for the editor's rules file and the simulator.

/** What a parser accepts, as data. */
export type Limits =
  | { type: 'int'; min: number; max: number }
  | { type: 'number'; min: number; max: number }
  | { type: 'oneOf'; values: readonly string[] }
  | { type: 'idList'; min: number; max: number; maxCount: number }
  | { type: 'text'; min: number; max: number; kind: 'line' | 'value' | 'multiline'; forbid?: string; forbidWhy?: string; noOption?: boolean; secret?: boolean; pattern?: string; patternText?: string }
  | { type: 'dateTime' }
  | { type: 'bool' }
  | { type: 'buffer'; maxBytes: number }
  | { type: 'list'; of: Limits; maxCount: number }
  | { type: 'record'; key: Limits; value: Limits; maxCount: number }
  | { type: 'object'; fields: Record<string, FieldLimits> };

/** A field of an object shape: its limits, whether it may be left out, and its default. */
export type FieldLimits = Limits & { optional?: boolean; default?: string | number | boolean; label?: string };

export interface Param<T> {
  readonly limits: FieldLimits;
  /** The typed value, or EINPUT naming `field`. */
  parse(value: unknown, field: string): T;
}

/** Left out: `undefined`, `null` or blank text (an editor field left empty). */
export function isBlank(value: unknown): boolean {
  return value === undefined || value === null || (typeof value === 'string' && value.trim() === '');
}

/** A whole number from `min` to `max` (a number, or decimal digits as text). */
export function int(range: { min: number; max: number }): Param<number> {
  return { limits: { type: 'int', ...range }, parse: (value, field) => checkWhole(value, field, range.min, range.max) };
}

/** The one rule for decimal numbers given as text: digits, an optional fraction and minus, spaces around (no `1e3`, no `0x10`). */
const DECIMAL = /^\s*-?\d{1,16}(\.\d{1,16})?\s*$/;

/** A number from `min` to `max`, fractions allowed (a number, or its decimal text), e.g. a frame rate. */
export function decimal(range: { min: number; max: number }): Param<number> {
  return {
    limits: { type: 'number', ...range },
    parse(value, field) {
      const n = typeof value === 'string' && DECIMAL.test(value) ? Number(value) : value;
      if (typeof n !== 'number' || !Number.isFinite(n) || n < range.min || n > range.max) {
        throw inputError(`${field} must be a number from ${range.min} to ${range.max}, got ${echo(value)}`);
      }
      return n;
    },
  };
}

/** One of `values`, spelled exactly (spaces around allowed). */
export function oneOf<const T extends string>(values: readonly T[]): Param<T> {
  return {
    limits: { type: 'oneOf', values },
    parse(value, field) {
      const wanted = typeof value === 'string' && value.length <= 64 ? value.trim() : undefined;
      const found = values.find((v) => v === wanted);
      if (found === undefined) throw inputError(`${field} must be one of ${values.join(', ')}, got ${echo(value)}`);
      return found;
    },
  };
}

/**
 * Ids like `'1,2,3'`, `[1, 2]` or `2`: each whole, from `min` to `max`, at most `maxCount`;
 * empty entries (`'1,,2'`) are skipped and a repeated id counts once.
 */
export function idList(range: { min: number; max: number; maxCount: number }): Param<number[]> {
  return {
    limits: { type: 'idList', ...range },
    parse(value, field) {
      // Long text is cut before it is split: the work stays bounded.
      const items = Array.isArray(value) ? value : typeof value === 'string' ? value.slice(0, range.maxCount * 20).split(',') : [value];
      const given = items.filter((item) => !isBlank(item));
      if (given.length > range.maxCount || (typeof value === 'string' && value.length > range.maxCount * 20)) throw inputError(`${field} holds at most ${range.maxCount} ids`);
      const ids = given.map((item) => checkWhole(item, `${field} (each id)`, range.min, range.max));
      return [...new Set(ids)];
    },
  };
}

export interface TextOptions {
  max: number;
  min?: number;
  kind?: 'line' | 'value' | 'multiline';
  forbid?: string;
  /**
   * The value may reach a shell on the device. `name` (names, users, paths): none of
   * SHELL_CHARACTERS; `secret` (passwords): none of SECRET_SHELL_CHARACTERS. Both: no word
   * starting with a dash.
   */
  shell?: 'name' | 'secret';
  /** No word may start with a dash (without refusing the shell characters: a pattern does). */
  noOption?: boolean;
  secret?: boolean;
  xml?: boolean;
  /** A regular expression the whole text must match (its source is data for the editor). */
  pattern?: RegExp;
  /** What the pattern stands for, in the error text (e.g. `two letters like SE`). */
  patternText?: string;
}

/** Text for its place (`checkText`): bounded, no control characters, optionally a pattern. */
export function text(options: TextOptions): Param<string> {
  const limits: Limits = { type: 'text', min: options.min ?? 1, max: options.max, kind: options.kind ?? 'line' };
  const shellSet = options.shell === 'name' ? SHELL_CHARACTERS : options.shell === 'secret' ? SECRET_SHELL_CHARACTERS : '';
  const forbid = [...new Set([...(options.forbid ?? ''), ...shellSet])].join('') || undefined;
  const forbidWhy = options.shell !== undefined ? SHELL_WHY : undefined;
  const noOption = options.shell !== undefined || options.noOption === true;
  if (forbid !== undefined) limits.forbid = forbid;
  if (forbidWhy !== undefined) limits.forbidWhy = forbidWhy;
  if (noOption) limits.noOption = true;
  if (options.secret) limits.secret = true;
  if (options.pattern) limits.pattern = options.pattern.source;
  if (options.pattern && options.patternText !== undefined) limits.patternText = options.patternText;
  return {
    limits,
    parse(value, field) {
      const checked = checkText(value, { what: field, max: options.max, min: options.min ?? 1, kind: options.kind ?? 'line', xml: options.xml, forbid, forbidWhy, noOption, secret: options.secret });
      if (options.pattern && !options.pattern.test(checked)) {
        throw inputError(`${field} must be ${options.patternText ?? `like ${options.pattern.source}`}, got ${options.secret ? '(hidden)' : echo(checked)}`);
      }
      return checked;
    },
  };
}

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;
/** An ISO 8601 date and time with a zone (`Z` or an offset), as `Date.toISOString` writes it. */
const ISO_WITH_ZONE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/;

/**
 * A device date and time `YYYY-MM-DD HH:MM:SS` that names a real moment. A Date or an ISO string
 * with a zone is converted to this host's local time, which is how the devices are set.
 */
export function dateTime(): Param<string> {
  return {
    limits: { type: 'dateTime' },
    parse(value, field) {
      if (value instanceof Date || (typeof value === 'string' && ISO_WITH_ZONE.test(value.trim()))) {
        const date = value instanceof Date ? value : new Date(value.trim());
        if (Number.isNaN(date.getTime())) throw inputError(`${field} is not a real date and time, got ${echo(value)}`);
        return localDateTime(date);
      }
      return checkDeviceDateTime(typeof value === 'string' ? value.trim() : value, field, ' (or a Date, or ISO 8601 with a zone)');
    },
  };
}

/** `YYYY-MM-DD HH:MM:SS` text that names a real moment (no 2026-02-30, no 25:00:00), as devices write it. */
export function checkDeviceDateTime(value: unknown, what: string, alternatives = ''): string {
  const match = typeof value === 'string' ? DATE_TIME.exec(value) : null;
  if (!match) throw inputError(`${what} must be a date like 2026-01-31 23:59:59${alternatives}, got ${echo(value)}`);
  const [y, mo, d, h, mi, s] = match.slice(1).map(Number) as [number, number, number, number, number, number];
  const date = new Date(Date.UTC(y, mo - 1, d, h, mi, s));
  const real = date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d && h < 24 && mi < 60 && s < 60;
  if (!real) throw inputError(`${what} ${echo(value)} is not a real date and time`);
  return match[0];
}

/** `YYYY-MM-DD HH:MM:SS` in this host's local time. */
export function localDateTime(date: Date): string {
  const two = (n: number): string => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${two(date.getMonth() + 1)}-${two(date.getDate())} ${two(date.getHours())}:${two(date.getMinutes())}:${two(date.getSeconds())}`;
}

/** `true` or `false`, or that text (any case, spaces around): an editor checkbox or a typed flow value. */
export function bool(): Param<boolean> {
  return {
    limits: { type: 'bool' },
    parse(value, field) {
      if (typeof value === 'boolean') return value;
      const word = typeof value === 'string' && value.length <= 8 ? value.trim().toLowerCase() : undefined;
      if (word === 'true') return true;
      if (word === 'false') return false;
      throw inputError(`${field} must be true or false, got ${echo(value)}`);
    },
  };
}

/** A Buffer (or Uint8Array) of 1 to `maxBytes` bytes. */
export function buffer(options: { maxBytes: number }): Param<Buffer> {
  return {
    limits: { type: 'buffer', maxBytes: options.maxBytes },
    parse(value, field) {
      if (!(value instanceof Uint8Array)) throw inputError(`${field} must be a Buffer, got ${echo(value)}`);
      if (value.length === 0) throw inputError(`${field} is empty`);
      if (value.length > options.maxBytes) throw inputError(`${field} must be at most ${options.maxBytes} bytes, got ${value.length}`);
      return Buffer.isBuffer(value) ? value : Buffer.from(value.buffer, value.byteOffset, value.length);
    },
  };
}

/** One item or a list of them (at most `maxCount`), always given back as a list. */
export function list<T>(item: Param<T>, options: { maxCount: number }): Param<T[]> {
  return {
    limits: { type: 'list', of: item.limits, maxCount: options.maxCount },
    parse(value, field) {
      const items = Array.isArray(value) ? value : [value];
      if (items.length > options.maxCount) throw inputError(`${field} holds at most ${options.maxCount} items, got ${items.length}`);
      return items.map((v, i) => item.parse(v, `${field}[${i}]`));
    },
  };
}

/** An object of names and values, e.g. `{ 'Image.I0.Text': 'Gate' }`: at least one entry, at most `maxCount`. */
export function record<V>(key: Param<string>, value: Param<V>, options: { maxCount: number }): Param<Record<string, V>> {
  return {
    limits: { type: 'record', key: key.limits, value: value.limits, maxCount: options.maxCount },
    parse(input, field) {
      if (typeof input !== 'object' || input === null || Array.isArray(input) || Buffer.isBuffer(input)) throw inputError(`${field} must be an object of names and values`);
      const entries = Object.entries(input);
      if (entries.length === 0) throw inputError(`${field} is empty: give at least one entry`);
      if (entries.length > options.maxCount) throw inputError(`${field} holds at most ${options.maxCount} entries, got ${entries.length}`);
      const out: Record<string, V> = {};
      for (const [k, v] of entries) {
        const name = key.parse(k, `${field} name`);
        out[name] = value.parse(v, `${field}.${name}`);
      }
      return out;
    },
  };
}

/**
 * An object checked as a whole by `check` (rules that tie its fields together, or that a
 * procedure of its own holds); anything but an object is checked as `{}`, so `check` names what
 * is missing.
 */
export function objectParam<T>(check: (fields: Readonly<Record<string, unknown>>) => T): Param<T> {
  return { limits: { type: 'object', fields: {} }, parse: (value) => check(typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {}) };
}

/** May be left out (blank): the value is then undefined. */
export function optional<T>(param: Param<T>): Param<T | undefined> {
  return { limits: { ...param.limits, optional: true }, parse: (value, field) => (isBlank(value) ? undefined : param.parse(value, field)) };
}

/** A parameter that always has a value: blank is its default. */
export interface DefaultedParam<T> extends Param<T> {
  readonly defaulted: true;
}

/** May be left out (blank): the value is then `fallback`. */
export function withDefault<T extends string | number | boolean>(param: Param<T>, fallback: T): DefaultedParam<T> {
  return { limits: { ...param.limits, optional: true, default: fallback }, parse: (value, field) => (isBlank(value) ? fallback : param.parse(value, field)), defaulted: true };
}

/** A text or number shown in the editor with this label. */
export function labelled<P extends Param<unknown>>(param: P, label: string): P {
  return { ...param, limits: { ...param.limits, label } };
}

/**
 * The same object parameter with each field's label for the editor (its dialog and help), written
 * beside the operation that takes it; parsing is unchanged. Every field needs one: a dialog
 * never falls back to showing a code key alone.
 */
export function withLabels<T extends object>(param: Param<T>, labels: { readonly [K in keyof T]-?: string }): Param<T> {
  const limits = param.limits;
  if (limits.type !== 'object') throw new Error('withLabels labels the fields of an object parameter');
  const fields: Record<string, FieldLimits> = {};
  for (const [name, field] of Object.entries(limits.fields)) {
    const label = (labels as Record<string, string | undefined>)[name];
    fields[name] = label === undefined ? field : { ...field, label };
  }
  return { limits: { ...limits, fields }, parse: param.parse };
}

type Shape = Record<string, Param<unknown>>;
export type ShapeValue<S extends Shape> = { [K in keyof S]: S[K] extends Param<infer T> ? T : never };

/**
 * An object with these fields. Unknown fields are EINPUT (a typo must not pass silently);
 * `ignore` names fields that belong to the caller (e.g. `operation`).
 */
export function shape<S extends Shape>(fields: S, options: { ignore?: readonly string[] } = {}): Param<ShapeValue<S>> & { fields: S } {
  const limits: Record<string, FieldLimits> = {};
  for (const [name, param] of Object.entries(fields)) limits[name] = param.limits;
  // Listed once: a relay or PTZ node parses its command for every message.
  const entries = Object.entries(fields);
  const ignored = options.ignore ?? [];
  return {
    fields,
    limits: { type: 'object', fields: limits },
    parse(value, field) {
      const input = isBlank(value) ? {} : value;
      if (typeof input !== 'object' || input === null || Array.isArray(input) || Buffer.isBuffer(input)) throw inputError(`${field} must be an object`);
      const given = input as Record<string, unknown>;
      for (const key of Object.keys(given)) {
        if (!Object.hasOwn(fields, key) && !ignored.includes(key)) throw unknownKey(key, Object.keys(fields));
      }
      const out: Record<string, unknown> = {};
      for (const [name, param] of entries) {
        const v = param.parse(given[name], name);
        if (v !== undefined) out[name] = v;
      }
      return out as ShapeValue<S>;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Secrets: which parameters are passwords, written once (the `secret` of `text`).

/** Whether a field holds a secret (a password parameter): text made with `secret: true`. */
export function isSecretField(limits: FieldLimits): boolean {
  return limits.type === 'text' && limits.secret === true;
}

/** The names of the secret fields of an object parameter (none for any other kind). */
export function secretFieldNames(param: Param<unknown>): readonly string[] {
  let names = SECRET_NAMES.get(param.limits);
  if (names === undefined) {
    const limits = param.limits;
    names = Object.freeze(limits.type === 'object' ? Object.entries(limits.fields).filter(([, field]) => isSecretField(field)).map(([name]) => name) : []);
    SECRET_NAMES.set(limits, names);
  }
  return names;
}

/** Asked on every call of an operation, found once per parameter (its limits never change). */
const SECRET_NAMES = new WeakMap<object, readonly string[]>();

/**
 * The secret values `input` gives for the secret fields of `param`, as text (a number given for
 * a password is sent as its digits): what a device's words must not show back.
 */
export function secretValues(param: Param<unknown>, input: unknown): string[] {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return [];
  const names = secretFieldNames(param);
  if (names.length === 0) return [];
  const given = input as Record<string, unknown>;
  return names
    .map((name) => given[name])
    .map((value) => (typeof value === 'string' ? value : typeof value === 'number' && Number.isFinite(value) ? String(value) : ''))
    .filter((value) => value !== '');
}

/**
 * `payload` without the fields `names` lists (in any case): the copy a failed message carries to
 * a Catch node. Anything that is not a plain object is given back as it is.
 */
export function withoutFields(payload: unknown, names: ReadonlySet<string>): unknown {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload) || Buffer.isBuffer(payload)) return payload;
  const entries = Object.entries(payload);
  if (!entries.some(([key]) => names.has(key.toLowerCase()))) return payload;
  return Object.fromEntries(entries.filter(([key]) => !names.has(key.toLowerCase())));
}
