import { strict as assert } from 'node:assert';
import { MAX_REMEMBERED_BODY, RepeatWatch } from '../lib/stream/repeat';
import { prng } from './helpers';

describe('RepeatWatch (a part that repeats the one before)', function () {
  it('takes the same bytes in another buffer for a repeat, and keeps its own copy, not a view of the chunk', function () {
    const watch = new RepeatWatch();
    const chunk = Buffer.from('--b\r\ngroup=1;level=0;threshold=10;\r\n', 'latin1');
    const body = chunk.subarray(5, chunk.length - 2);
    assert.equal(watch.repeats(body), false);
    const again = Buffer.from('xxgroup=1;level=0;threshold=10;', 'latin1').subarray(2);
    assert.equal(watch.repeats(again), true);
    // The chunk's memory is reused by the next read: what was remembered must not change with it.
    chunk.fill(0x20);
    assert.equal(watch.repeats(Buffer.from('group=1;level=0;threshold=10;', 'latin1')), true);
    assert.equal(watch.repeats(body), false);
  });

  it('tells apart bodies that differ in one byte anywhere, or in their length (random sequences against a plain comparison)', function () {
    const next = prng(21);
    for (let run = 0; run < 200; run++) {
      const watch = new RepeatWatch();
      let previous: Buffer | undefined;
      for (let i = 0; i < 50; i++) {
        // Short and long bodies (the long ones go to the native compare), many repeats, some one byte off.
        const size = next() < 0.5 ? Math.floor(next() * 80) : Math.floor(next() * 300);
        let body: Buffer;
        const pick = next();
        if (previous !== undefined && pick < 0.4) body = Buffer.from(previous);
        else if (previous !== undefined && previous.length > 0 && pick < 0.7) {
          body = Buffer.from(previous);
          const at = Math.floor(next() * body.length);
          body[at] = ((body[at] as number) + 1 + Math.floor(next() * 255)) % 256;
        } else if (previous !== undefined && pick < 0.8) body = previous.subarray(0, Math.max(0, previous.length - 1));
        else body = Buffer.from(Array.from({ length: size }, () => Math.floor(next() * 3)));
        const expected = previous !== undefined && previous.equals(body);
        assert.equal(watch.repeats(body), expected, `run ${run}, body ${i}`);
        previous = Buffer.from(body);
      }
    }
  });

  it('never takes a body over the bound for a repeat, and what it keeps stays within the bound', function () {
    const watch = new RepeatWatch();
    const large = Buffer.alloc(MAX_REMEMBERED_BODY + 1, 0x61);
    assert.equal(watch.repeats(large), false);
    assert.equal(watch.repeats(large), false);
    const largest = Buffer.alloc(MAX_REMEMBERED_BODY, 0x61);
    assert.equal(watch.repeats(largest), false);
    assert.equal(watch.repeats(Buffer.from(largest)), true);
    // After a body over the bound, the one before it is no longer the one compared with.
    assert.equal(watch.repeats(large), false);
    assert.equal(watch.repeats(largest), false);
  });

  it('compares a short body after a long one with the short one only (the kept buffer is reused, not trusted past its size)', function () {
    const watch = new RepeatWatch();
    assert.equal(watch.repeats(Buffer.from('a'.repeat(200))), false);
    assert.equal(watch.repeats(Buffer.from('a'.repeat(10))), false);
    assert.equal(watch.repeats(Buffer.from('a'.repeat(10))), true);
    assert.equal(watch.repeats(Buffer.from('a'.repeat(200))), false);
    assert.equal(watch.repeats(Buffer.alloc(0)), false);
    assert.equal(watch.repeats(Buffer.alloc(0)), true);
  });
});
