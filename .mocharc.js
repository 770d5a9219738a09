// Files named on the command line (`npx mocha dist/test/x.test.js`) run alone; mocha would
// otherwise add them to this default spec and run the whole suite.
const named = process.argv.slice(2).some((arg) => /\.test\.js$/.test(arg));

module.exports = {
  spec: named ? [] : ['dist/test/**/*.test.js'],
  timeout: 10000,
  exit: false,
  'enable-source-maps': true,
  // A committed `.only` would run one test and pass: it fails the run instead (lint refuses it too).
  forbidOnly: true,
  // The spec reporter, plus the full title of each pending test after the summary (.ci/run reads them).
  reporter: 'scripts/mocha-reporter.js',
};
