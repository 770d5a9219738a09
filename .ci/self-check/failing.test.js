// bash .ci/run --self-check: a failing test.
const assert = require('node:assert');

describe('Self-check', function () {
  it('passes', function () {});
  it('fails', function () {
    assert.equal(1, 2);
  });
});
