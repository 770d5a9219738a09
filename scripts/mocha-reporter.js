// mocha's spec reporter, and after its summary one line per pending test with its full title
// ("  pending: <suite> <test>"), so that a skip is seen by name: .ci/run compares these lines
// with test/pending-allowed.txt, and a leg with a pending test not listed there fails.
const { reporters } = require('mocha');

class SpecWithPending extends reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    const pending = [];
    runner.on('pending', (test) => pending.push(test.fullTitle()));
    // After the spec reporter's own summary (registered first, so it runs first).
    runner.once('end', () => {
      for (const title of pending) reporters.Base.consoleLog('  pending: %s', title.replace(/\s+/g, ' '));
      if (pending.length > 0) reporters.Base.consoleLog();
    });
  }
}

module.exports = SpecWithPending;
