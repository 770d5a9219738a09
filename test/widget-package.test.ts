/**
 * The Dashboard 2 widgets are a package of their own (packages/node-red-dashboard-2-ipcam, an npm
 * workspace), found by Dashboard 2 as any third-party widget package is: by its name and its
 * "node-red-dashboard-2" section. It goes out with the main package, version for version.
 */
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT, WIDGETS_ROOT } from './helpers';

interface PackageJson {
  name: string;
  version: string;
  engines?: Record<string, string>;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  files?: string[];
  'node-red'?: { version?: string; dependencies?: string[]; nodes?: Record<string, string>; plugins?: Record<string, string> };
  'node-red-dashboard-2'?: { widgets?: Record<string, { output: string; component: string }> };
}

const read = (dir: string): PackageJson => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as PackageJson;

describe('the widget package node-red-dashboard-2-ipcam', function () {
  const main = read(PROJECT_ROOT);
  const widgets = read(WIDGETS_ROOT);

  it('is named and declared so that Dashboard 2 finds its widgets, one bundle per widget node type', function () {
    assert.match(widgets.name, /^node-red-dashboard-2-/);
    const declared = Object.keys(widgets['node-red-dashboard-2']?.widgets ?? {}).sort();
    assert.deepEqual(declared, Object.keys(widgets['node-red']?.nodes ?? {}).sort());
    for (const [type, w] of Object.entries(widgets['node-red-dashboard-2']?.widgets ?? {})) assert.equal(w.output, `${type}.umd.js`, type);
  });

  it('goes with the main package: same version, depends on exactly that version, same engines and Node-RED range', function () {
    assert.equal(widgets.version, main.version);
    assert.equal(widgets.dependencies?.[main.name], main.version);
    assert.deepEqual(widgets['node-red']?.dependencies, [main.name]);
    assert.deepEqual(widgets.engines, main.engines);
    assert.equal(widgets['node-red']?.version, main['node-red']?.version);
  });

  it('holds the widget node types, which the main package no longer declares; the main package needs neither Vue nor Vite', function () {
    const mainTypes = Object.keys(main['node-red']?.nodes ?? {});
    for (const type of Object.keys(widgets['node-red']?.nodes ?? {})) assert.ok(!mainTypes.includes(type), type);
    assert.equal(main['node-red-dashboard-2'], undefined);
    assert.equal(main['node-red']?.plugins, undefined);
    for (const dep of ['vue', 'vite', '@vitejs/plugin-vue']) {
      assert.equal(main.dependencies?.[dep] ?? main.devDependencies?.[dep], undefined, dep);
      assert.ok(widgets.devDependencies?.[dep], dep);
    }
  });

  it('ships its compiled nodes and bundles only', function () {
    assert.deepEqual(widgets.files, ['dist/nodes', '!dist/**/*.map', '!dist/**/*.d.ts', 'resources']);
  });
});
