// bash .ci/run --self-check: a leg that runs no test at all.
describe('Self-check', function () {});
