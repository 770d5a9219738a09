module.exports = {
  spec: ['dist/test/**/*.test.js'],
  timeout: 10000,
  exit: false,
  'enable-source-maps': true,
};
