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
    files: ['scripts/**/*.js', 'packages/*/scripts/**/*.js', '.mocharc.js'],
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly', module: 'writable', process: 'readonly', __dirname: 'readonly', console: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
