// bash .ci/run --self-check: a committed `.only` (forbidOnly in .mocharc.js fails the run).
describe('Self-check', function () {
  // eslint-disable-next-line no-restricted-syntax -- the case under check
  it.only('runs alone', function () {});
  it('is left out by the .only', function () {});
});
