// bash .ci/run --self-check: a leg that runs tests and passes.
const assert = require('node:assert');

describe('Self-check', function () {
  it('passes', function () {
    assert.equal(1 + 1, 2);
  });
  it('passes again', function () {
    assert.ok(true);
  });
});
