// Files named on the command line (`npx mocha dist/test/x.test.js`) run alone; mocha would
// otherwise add them to this default spec and run the whole suite.
const named = process.argv.slice(2).some((arg) => /\.test\.js$/.test(arg));

module.exports = {
  spec: named ? [] : ['dist/test/**/*.test.js'],
  timeout: 10000,
  exit: false,
  'enable-source-maps': true,
};
