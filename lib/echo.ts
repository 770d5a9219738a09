/**
 * Text that goes into an error message, a status or a log line: given values and a device's own
 * words are echoed shortened and on one line, so that a 10 MB payload or a line break never
 * reaches a log, and the one rule for that lives here.
 */

/** Most characters of a given value echoed into a text. */
export const ECHO_MAX = 40;
/** Most characters of a device's own words (an error description) shown in a text. */
export const DEVICE_WORDS_MAX = 120;

/** C0 and C1 controls, DEL and the Unicode line and paragraph separators: anything that breaks or hides a line. */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
export const LINE_BREAKER = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/u;
/** A surrogate half without its other half (not a character; JSON and URLs cannot carry it). */
export const LONE_SURROGATE = /\p{Cs}/u;
/** The same, for replacing every one of them. */
const LINE_BREAKERS = new RegExp(LINE_BREAKER.source, 'gu');
const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, 'gu');

/**
 * A given value as it may appear in an error or log text: text quoted, shortened to `max`
 * characters (`...` marks the cut) and with every control character written as an escape, so it
 * stays on one line; other values by kind, never their content beyond `max`.
 */
export function echo(value: unknown, max = ECHO_MAX): string {
  if (typeof value === 'string') return `"${escapeLine(cut(value, max))}"`;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (typeof value === 'bigint') return `${cut(String(value), max)}n`;
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Buffer.isBuffer(value)) return `a Buffer of ${value.length} bytes`;
  if (Array.isArray(value)) return `a list of ${value.length}`;
  if (value instanceof Date) return 'a Date';
  return typeof value === 'object' ? 'an object' : `a value of type ${typeof value}`;
}

/** Text on one line, at most `max` characters: control characters become spaces, runs of space one. */
export function oneLine(text: string, max: number): string {
  // Cut first: the work stays bounded however long the text is.
  const head = text.length > max * 2 + 16 ? text.slice(0, max * 2 + 16) : text;
  const flat = head.replace(LINE_BREAKERS, ' ').replace(LONE_SURROGATES, '\ufffd').replace(/ {2,}/g, ' ').trim();
  return cut(flat, max);
}

/**
 * A device's own words (an error description, an error line) as they may be shown: one line, at
 * most `DEVICE_WORDS_MAX` characters, or undefined when they hold one of `secrets` (in any case)
 * or nothing. Callers omit them then; the text around them is built from known parts.
 */
export function deviceWords(text: string | undefined, secrets: readonly string[]): string | undefined {
  if (text === undefined) return undefined;
  const lower = text.toLowerCase();
  if (secrets.some((secret) => secret !== '' && lower.includes(secret.toLowerCase()))) return undefined;
  const line = oneLine(text, DEVICE_WORDS_MAX);
  return line === '' ? undefined : line;
}

/** What stands in a device text for a line that held a secret. */
export const WITHHELD_LINE = '(line withheld: it held a password)';

/**
 * A device's text of several lines (a test log) as it may be given to a flow: each line holding
 * one of `secrets` (in any case, the rule of `deviceWords`) is replaced by `WITHHELD_LINE`.
 */
export function withholdLines(text: string, secrets: readonly string[]): string {
  const wanted = secrets.filter((secret) => secret !== '').map((secret) => secret.toLowerCase());
  if (wanted.length === 0) return text;
  return text
    .split('\n')
    .map((line) => {
      const lower = line.toLowerCase();
      return wanted.some((secret) => lower.includes(secret)) ? WITHHELD_LINE + (line.endsWith('\r') ? '\r' : '') : line;
    })
    .join('\n');
}

/** At most `max` characters, never splitting a surrogate pair, `...` marking a cut. */
function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}...`;
}

function escapeLine(text: string): string {
  return text
    .replace(/\\/g, '\\\\')
    .replace(/"/g, '\\"')
    .replace(LINE_BREAKERS, (c) => {
      if (c === '\n') return '\\n';
      if (c === '\r') return '\\r';
      if (c === '\t') return '\\t';
      return `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
    })
    .replace(LONE_SURROGATES, (c) => `\\u${c.charCodeAt(0).toString(16)}`);
}
