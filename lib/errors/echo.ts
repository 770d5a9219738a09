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
 * The shortest piece of a secret that counts as a copy of it: a device that echoes 40 of a
 * password's 56 characters, or any 6 of them, gives that much of it away. A secret shorter than
 * this counts only whole.
 */
export const SECRET_PIECE = 6;

/** What a text is checked against: the short secrets whole, every `SECRET_PIECE` window of the others. */
export interface SecretMatcher {
  readonly whole: readonly string[];
  readonly pieces: ReadonlySet<string>;
}

/** Compiles `secrets` (any case) once for several texts; blank ones are ignored. */
export function secretMatcher(secrets: readonly string[]): SecretMatcher {
  const whole: string[] = [];
  const pieces = new Set<string>();
  for (const secret of secrets) {
    const lower = secret.toLowerCase();
    if (lower === '') continue;
    if (lower.length < SECRET_PIECE) whole.push(lower);
    // Every longer piece holds one of these windows: looking them up keeps the work linear in the text.
    else for (let i = 0; i + SECRET_PIECE <= lower.length; i++) pieces.add(lower.slice(i, i + SECRET_PIECE));
  }
  return { whole, pieces };
}

/**
 * The secrets of a call: `base` and what `more` adds. `base` itself when nothing is added: asked
 * for every request, most of which add none.
 */
export function withSecrets(base: readonly string[], more: readonly string[] | undefined): readonly string[] {
  return more === undefined || more.length === 0 ? base : [...base, ...more];
}

/**
 * Whether `text` holds any part of a secret (in any case): a piece of `SECRET_PIECE` or more
 * characters of one, or the whole of a shorter one. The one rule for a device's words.
 */
export function holdsSecret(text: string, secrets: readonly string[] | SecretMatcher): boolean {
  const matcher = isMatcher(secrets) ? secrets : secretMatcher(secrets);
  if (matcher.whole.length === 0 && matcher.pieces.size === 0) return false;
  const lower = text.toLowerCase();
  if (matcher.whole.some((secret) => lower.includes(secret))) return true;
  if (matcher.pieces.size === 0) return false;
  for (let i = 0; i + SECRET_PIECE <= lower.length; i++) if (matcher.pieces.has(lower.slice(i, i + SECRET_PIECE))) return true;
  return false;
}

function isMatcher(value: readonly string[] | SecretMatcher): value is SecretMatcher {
  return !Array.isArray(value);
}

/**
 * A device's own words (an error description, an error line) as they may be shown: one line, at
 * most `DEVICE_WORDS_MAX` characters, or undefined when they hold any part of one of `secrets`
 * (`holdsSecret`: checked on the whole text before it is shortened, and on the line shown) or
 * nothing. Callers omit them then; the text around them is built from known parts.
 */
export function deviceWords(text: string | undefined, secrets: readonly string[]): string | undefined {
  if (text === undefined) return undefined;
  const matcher = secretMatcher(secrets);
  if (holdsSecret(text, matcher)) return undefined;
  const line = oneLine(text, DEVICE_WORDS_MAX);
  // Flattening joins what a line break kept apart: the line shown is checked too.
  if (holdsSecret(line, matcher)) return undefined;
  return line === '' ? undefined : line;
}

/** What stands in a device text for a line that held a secret. */
export const WITHHELD_LINE = '(line withheld: it held a password)';

/**
 * A device's text of several lines (a test log) as it may be given to a flow: each line holding
 * any part of one of `secrets` (the rule of `holdsSecret`) is replaced by `WITHHELD_LINE`.
 */
export function withholdLines(text: string, secrets: readonly string[]): string {
  const matcher = secretMatcher(secrets);
  if (matcher.whole.length === 0 && matcher.pieces.size === 0) return text;
  return text
    .split('\n')
    .map((line) => (holdsSecret(line, matcher) ? WITHHELD_LINE + (line.endsWith('\r') ? '\r' : '') : line))
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
