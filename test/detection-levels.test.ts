import { strict as assert } from 'node:assert';
import { parseLevels, type DetectionLevel } from '../lib/ops/io';
import { prng } from './helpers';

/** parseLevels as it was before it stopped splitting into arrays: the reference for the random comparison. */
function previousParseLevels(text: string): DetectionLevel[] {
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

const pick = <T>(next: () => number, list: readonly T[]): T => list[Math.floor(next() * list.length)] as T;
const NAMES = ['group', 'level', 'threshold', 'group', 'level', 'threshold', 'other', 'Group', ''];
const VALUES = ['0', '7', '40', '100', '-3', '1e2', '0x1f', '.5', '', 'x', 'Infinity', '=', '4=4', ' 12 '];
const SPACE = ['', '', '', ' ', '\t', '\r'];
const BREAKS = ['\r\n', '\n', '\n\n', '\r', '\r\r\n'];

/** A random field: mostly `name=value`, sometimes without `=` or with two. */
function field(next: () => number): string {
  const name = `${pick(next, SPACE)}${pick(next, NAMES)}${pick(next, SPACE)}`;
  const value = `${pick(next, SPACE)}${pick(next, VALUES)}${pick(next, SPACE)}`;
  const r = next();
  return r < 0.8 ? `${name}=${value}` : r < 0.9 ? `${name}${value}` : `${name}==${value}`;
}

/** A random part: lines of fields, most of them level lines in some order. */
function part(next: () => number): string {
  let text = '';
  const lines = Math.floor(next() * 6);
  for (let i = 0; i < lines; i++) {
    const fields = Math.floor(next() * 6);
    for (let k = 0; k < fields; k++) text += field(next) + (next() < 0.9 ? ';' : '');
    text += pick(next, BREAKS);
  }
  return text;
}

describe('parseLevels (detection levels)', function () {
  it('reads the lines of a part, lowest group first', function () {
    assert.deepEqual(parseLevels('group=2;level=55;threshold=50;\r\ngroup=1;level=0;threshold=40;'), [
      { group: 1, level: 0, threshold: 40, triggered: false },
      { group: 2, level: 55, threshold: 50, triggered: true },
    ]);
    assert.deepEqual(parseLevels(' group = 3 ; level=9;threshold=9;level=1\n\nnot a line\ngroup=4;level=1'), [{ group: 3, level: 1, threshold: 9, triggered: false }]);
    assert.deepEqual(parseLevels(''), []);
  });

  it('gives what the previous parser gave on 20,000 random parts (stray and doubled =, spaces, odd numbers, line breaks)', function () {
    const next = prng(13);
    let found = 0;
    for (let i = 0; i < 20_000; i++) {
      const text = part(next);
      const expected = previousParseLevels(text);
      found += expected.length;
      assert.deepEqual(parseLevels(text), expected, JSON.stringify(text));
    }
    assert.ok(found > 1000, `the random parts hold level lines (${found})`);
  });

  it('gives what the previous parser gave on well-formed parts in any group order', function () {
    const next = prng(7);
    for (let i = 0; i < 2000; i++) {
      const lines = Array.from({ length: 1 + Math.floor(next() * 8) }, () => `group=${Math.floor(next() * 6)};level=${Math.floor(next() * 101)};threshold=${Math.floor(next() * 101)};`);
      const text = lines.join(next() < 0.5 ? '\r\n' : '\n');
      assert.deepEqual(parseLevels(text), previousParseLevels(text), text);
    }
  });
});
