/**
 * The nearest known word to a mistyped one, for error texts: `unknown key 'stat' (did you mean
 * 'state'?)`. Offered, never applied: a gate or a camera never acts on a guess. One rule for every
 * payload key, operation name and short-form word.
 */

import { echo } from '../errors/echo';
import { inputError, type IpcamError } from '../errors/errors';

/** Longest word compared: a guess about a 10 KB key is worth nothing and would cost quadratic time. */
const MAX_WORD = 64;

/**
 * The known word closest to `given` (case ignored), when it is close enough to be a slip: at most
 * one edit for words of up to four letters, two for longer ones (a transposition counts as one).
 * Ties go to a word that begins with `given` (typing cut short), then to the first in `known`.
 */
export function nearest(given: string, known: Iterable<string>): string | undefined {
  if (given.length === 0 || given.length > MAX_WORD) return undefined;
  const word = given.toLowerCase();
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    if (candidate.length > MAX_WORD) continue;
    const allowed = Math.min(word.length, candidate.length) <= 4 ? 1 : 2;
    if (Math.abs(candidate.length - word.length) > allowed) continue;
    const d = distance(word, candidate.toLowerCase(), allowed);
    // Between two as near, a word cut short ('of' for 'off') beats one with a letter changed ('on').
    const better = d < bestDistance || (d === bestDistance && best !== undefined && !best.toLowerCase().startsWith(word) && candidate.toLowerCase().startsWith(word));
    if (d <= allowed && better) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

/** ` (did you mean "state"?)` for an error text, or `''` when nothing is near. */
export function didYouMean(given: unknown, known: Iterable<string>): string {
  if (typeof given !== 'string') return '';
  const near = nearest(given.trim(), known);
  return near === undefined ? '' : ` (did you mean "${near}"?)`;
}

/**
 * The EINPUT of a key nobody asked for: `unknown key "stat" (did you mean "state"?): use output,
 * state, pulse, sequence`, with `key 'stat'` as the status's reason (or `brief`). `hint` ends the
 * text (what else the sender may do).
 */
export function unknownKey(key: string, known: readonly string[], hint = '', brief = `key '${oneWord(key)}'`): IpcamError {
  const use = known.length === 0 ? 'this takes no parameters' : `use ${known.join(', ')}`;
  return inputError(`unknown key ${echo(key)}${didYouMean(key, known)}: ${use}${hint}`, brief);
}

/**
 * The EINPUT of a word (a short form, an action name) that is not one of `known` exactly: the
 * nearest is offered, never applied, even when only its case differs.
 */
export function unknownWord(what: string, given: unknown, known: readonly string[], use = `use ${known.join(', ')}`): IpcamError {
  return inputError(`Unknown ${what} ${echo(given)}${didYouMean(given, known)}: ${use}; nothing was sent`, typeof given === 'string' ? `${what} '${oneWord(given)}'` : `${what} ${echo(given, 12)}`);
}

/** A given word for a status: its first 12 characters, on one line. */
function oneWord(word: string): string {
  const flat = echo(word, 12);
  return flat.slice(1, -1);
}

/** Optimal string alignment distance (Levenshtein plus adjacent transpositions), stopping past `limit`. */
function distance(a: string, b: string, limit: number): number {
  if (a === b) return 0;
  let before = new Array<number>(b.length + 1).fill(0);
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  let current = new Array<number>(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    current[0] = i;
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, before[j - 2]! + 1);
      current[j] = d;
      if (d < rowMin) rowMin = d;
    }
    if (rowMin > limit) return limit + 1;
    [before, previous, current] = [previous, current, before];
  }
  return previous[b.length]!;
}
