/**
 * The checks every value passes before it is sent to a device: text fit for its place (XML 1.0
 * characters, one line, bounded length) and whole numbers in range. The limits themselves are
 * data of the modules that send the values (plate-input, cgi/ptz, cgi/relay, ...); the editor
 * dialogs mirror them and say where from. Every failure is `EINPUT`, thrown before anything is sent.
 */
import { inputError } from './errors';
import { echo } from './echo';

/** Characters XML 1.0 cannot carry: controls other than tab, LF and CR, U+FFFE/U+FFFF, lone surrogates. */
const NOT_XML = /[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]/u;
/** C0 and C1 controls, DEL, and the Unicode line and paragraph separators. */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/u;
/** C0 controls and DEL except tab: what breaks the line-based `key=value` answers of the CGI interface. */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL_BUT_TAB = /[\u0000-\u0008\u000a-\u001f\u007f]/u;
/** Half of a surrogate pair alone: neither XML nor a URL (UTF-8) can carry it. */
const LONE_SURROGATE = /\p{Cs}/u;

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
  kind?: 'line' | 'value';
  /** Goes into an XML document: XML 1.0 characters only (line text has none of the others anyway). */
  xml?: boolean;
  /** Characters the place forbids besides controls, e.g. `~` in a CGI preset name. */
  forbid?: string;
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
  if (LONE_SURROGATE.test(text)) throw inputError(`${rule.what} ${echo(text)} holds half of a character (a lone surrogate)`);
  const control = ((rule.kind ?? 'line') === 'line' ? CONTROL : CONTROL_BUT_TAB).exec(text)?.[0];
  if (control !== undefined) throw inputError(`${rule.what} ${echo(text)} holds a control character (${codeOf(control)}): it must be ${(rule.kind ?? 'line') === 'line' ? 'one line of text' : 'text without line breaks'}`);
  const notXml = rule.xml ? notXmlChar(text) : undefined;
  if (notXml !== undefined) throw inputError(`${rule.what} ${echo(text)} holds ${codeOf(notXml)}, which XML 1.0 cannot carry`);
  const forbidden = rule.forbid === undefined ? undefined : [...rule.forbid].find((c) => text.includes(c));
  if (forbidden !== undefined) throw inputError(`${rule.what} must not contain ${echo(forbidden)}`);
  return text;
}

/**
 * A whole number from `min` to `max`: a number, or its decimal digits as text (spaces around
 * allowed). `1e20`, `2.5`, `NaN`, `'0x10'` and anything out of range are `EINPUT`.
 */
export function checkWhole(value: unknown, what: string, min: number, max: number): number {
  const n = typeof value === 'string' && /^\s*-?\d{1,16}\s*$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < min || n > max) {
    throw inputError(`${what} must be a whole number from ${min} to ${max}, got ${echo(value)}`);
  }
  return n;
}

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
