import { strict as assert } from 'node:assert';
import { didYouMean, nearest } from '../lib/input/suggest';
import { chooseOperation, REQUEST_OPERATIONS } from '../lib/ops';
import { shape, int, optional } from '../lib/input/params';
import { IpcamError } from '../lib/errors/errors';

describe('the nearest known word (suggest)', function () {
  it('offers the word one slip away, case ignored, and nothing for a word far from all', function () {
    const keys = ['output', 'state', 'pulse', 'sequence'];
    assert.equal(nearest('stat', keys), 'state');
    assert.equal(nearest('outptu', keys), 'output', 'a transposition is one slip');
    assert.equal(nearest('STATE', keys), 'state');
    assert.equal(nearest('sequense', keys), 'sequence');
    assert.equal(nearest('gruop', ['group', 'plate', 'owner']), 'group');
    assert.equal(nearest('acton', ['action', 'speed', 'duration']), 'action');
    assert.equal(nearest('duraton', ['action', 'speed', 'duration']), 'duration');
    assert.equal(nearest('colour', keys), undefined);
    assert.equal(nearest('of', ['true', 'false', 'on', 'off']), 'off', 'a word cut short beats one with a letter changed');
    assert.equal(nearest('ob', ['on', 'off']), 'on');
    assert.equal(nearest('', keys), undefined);
    assert.equal(nearest('x'.repeat(10_000), keys), undefined, 'a huge word costs nothing and matches nothing');
  });

  it('says it as a clause of an error text, never for what is not text', function () {
    assert.equal(didYouMean('stat', ['state']), ' (did you mean "state"?)');
    assert.equal(didYouMean(' stat ', ['state']), ' (did you mean "state"?)');
    assert.equal(didYouMean(42, ['state']), '');
    assert.equal(didYouMean('zzz', ['state']), '');
  });

  it('an unknown parameter key is EINPUT naming the key and the nearest one', function () {
    const params = shape({ group: optional(int({ min: 1, max: 8 })), limit: optional(int({ min: 1, max: 99 })) });
    assert.throws(
      () => params.parse({ gruop: 2 }, 'payload'),
      (err: unknown) => err instanceof IpcamError && err.code === 'EINPUT' && /unknown key "gruop" \(did you mean "group"\?\)/.test(err.message),
    );
  });

  it('an operation name in the wrong case is refused with the right one offered, never run', function () {
    assert.throws(
      () => chooseOperation(REQUEST_OPERATIONS, 'msg', 'getdeviceinfo'),
      (err: unknown) => err instanceof IpcamError && err.code === 'EINPUT' && /Unknown operation "getdeviceinfo" \(did you mean "getDeviceInfo"\?\)/.test(err.message),
    );
  });
});
