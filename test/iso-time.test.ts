import { strict as assert } from 'node:assert';
import { isoTime } from '../lib/events/iso-time';

describe('isoTime', function () {
  it('writes what Date.toISOString writes: random times over the whole range a Date holds, and every edge', function () {
    const edges = [0, -1, 1, 999, 1000, 86_399_999, 86_400_000, -86_400_000, 951_782_400_000 /* 2000-02-29 */, 1_795_682_787_283, -62_167_219_200_000, -62_167_219_200_001, 253_402_300_799_999, 253_402_300_800_000, 8.64e15, -8.64e15, 1.5, -1.5, 4_107_542_399_999];
    let seed = 12_345;
    const random = (): number => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    const times = [...edges];
    for (let i = 0; i < 20_000; i++) times.push(Math.round((random() * 2 - 1) * 8.64e15 * (i % 2 === 0 ? 1 : 1e-3)));
    for (let i = 0; i < 20_000; i++) times.push(Math.floor(random() * 4e12)); // 1970-2096, where devices post
    for (const t of times) assert.equal(isoTime(t), new Date(t).toISOString(), `time ${t}`);
  });

  it('throws for a time no Date holds, as the Date does', function () {
    for (const t of [NaN, Infinity, 8.64e15 + 1]) assert.throws(() => isoTime(t), RangeError);
  });
});
