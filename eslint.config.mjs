import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.demo/**', 'resources/rules.js', 'resources/*.umd.js', 'packages/*/dist/**', 'packages/*/resources/*.umd.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      'no-restricted-imports': ['error', { patterns: [] }],
    },
  },
  {
    // A committed `.only` runs one test and passes (mocha's forbidOnly fails the run too).
    files: ['test/**/*.ts', '.ci/**/*.js'],
    rules: {
      'no-restricted-syntax': [
        'error',
        { selector: "CallExpression > MemberExpression.callee[property.name='only'][object.name=/^(it|describe|context|specify)$/]", message: 'No .only in a committed test: it runs that test alone and passes.' },
      ],
    },
  },
  {
    files: ['lib/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { paths: ['node-red'], patterns: ['**/nodes/**'] }],
    },
  },
  {
    // Editor code: runs in the browser beside Node-RED's editor (jQuery, RED).
    files: ['resources/**/*.js'],
    languageOptions: { sourceType: 'script', globals: { window: 'readonly', $: 'readonly', RED: 'readonly' } },
    rules: { 'no-control-regex': 'off' },
  },
  {
    files: ['scripts/**/*.mjs', 'packages/*/scripts/**/*.mjs'],
    languageOptions: { sourceType: 'module', globals: { process: 'readonly', console: 'readonly' } },
  },
  {
    // The fixtures of `bash .ci/run --self-check`: mocha test files as mocha loads them.
    files: ['.ci/**/*.js'],
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly', describe: 'readonly', it: 'readonly', setInterval: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['scripts/**/*.js', 'packages/*/scripts/**/*.js', '.mocharc.js'],
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly', module: 'writable', process: 'readonly', __dirname: 'readonly', console: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
