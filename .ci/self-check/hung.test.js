// bash .ci/run --self-check: tests pass, and a timer left running keeps mocha from exiting.
describe('Self-check', function () {
  it('passes and leaves a timer running', function () {
    setInterval(() => undefined, 1000);
  });
});
