/**
 * Which Node and Node-RED this run is on: printed for the CI log and checked against what the
 * package promises (`engines.node`, `node-red.version`) and, in a CI leg, against what the leg says
 * it runs (IPCAM_CI_NODE, IPCAM_CI_NODE_RED). A leg that silently ran another Node (a `node`
 * on npm's PATH) or the lockfile's Node-RED instead of the one it installed fails here.
 */
import { strict as assert } from 'node:assert';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { PROJECT_ROOT } from './helpers';

interface PackageJson {
  name?: string;
  version: string;
  engines?: { node?: string };
  dependencies?: Record<string, string>;
  'node-red'?: { version?: string };
}

function readPackage(dir: string): PackageJson {
  return JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as PackageJson;
}

function parts(version: string): number[] {
  const m = /^v?(\d+)\.(\d+)\.(\d+)/.exec(version);
  assert.ok(m, `a version: ${version}`);
  return [Number(m[1]), Number(m[2]), Number(m[3])];
}

/** `version` satisfies `range`, where a range is `>=X`, `>=X.Y` or `>=X.Y.Z` (all the package and Node-RED use). */
function satisfies(version: string, range: string): boolean {
  const m = /^>=\s*(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(range.trim());
  assert.ok(m, `a range of the form >=X.Y.Z: ${range}`);
  const want = [Number(m[1]), Number(m[2] ?? 0), Number(m[3] ?? 0)];
  const have = parts(version);
  for (let i = 0; i < 3; i++) {
    if (have[i] !== want[i]) return (have[i] ?? 0) > (want[i] ?? 0);
  }
  return true;
}

/** Where Node finds package `name` from `from` (walking up the node_modules folders; `exports` may hide package.json from require). */
function packageDir(name: string, from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    assert.notEqual(dirname(dir), dir, `${name} is installed (looked from ${from})`);
  }
}

/** The installed packages `name` depends on at run time, itself excluded, found as Node finds them. */
function runtimeDependencies(pkg: PackageJson, from: string, seen = new Map<string, PackageJson>()): Map<string, PackageJson> {
  for (const dep of Object.keys(pkg.dependencies ?? {})) {
    if (seen.has(dep)) continue;
    const dir = packageDir(dep, from);
    const found = readPackage(dir);
    seen.set(dep, found);
    runtimeDependencies(found, dir, seen);
  }
  return seen;
}

describe('runtime versions', () => {
  // The Node-RED the test helper runs: node-helper initialises it from this same path.
  const redDir = dirname(require.resolve('node-red/package.json'));
  const red = module.require('node-red') as { version(): string };
  const ours = readPackage(PROJECT_ROOT);
  const theirs = readPackage(redDir);

  before(() => {
    console.log(`      runtime: Node ${process.version}, Node-RED ${red.version()} (${redDir})`);
  });

  it('the loaded Node-RED is the one installed beside the package', () => {
    // Node-RED adds "-git" when a .git folder sits four levels above its runtime (a clone with node_modules inside).
    assert.equal(red.version().replace(/-git$/, ''), theirs.version);
  });

  it('this Node satisfies engines.node and the Node-RED its node-red.version', () => {
    assert.ok(ours.engines?.node && satisfies(process.version, ours.engines.node), `Node ${process.version} satisfies engines.node ${ours.engines?.node}`);
    const range = ours['node-red']?.version;
    assert.ok(range && satisfies(red.version(), range), `Node-RED ${red.version()} satisfies node-red.version ${range}`);
  });

  it("this Node satisfies the running Node-RED's own engines.node", () => {
    const range = theirs.engines?.node;
    assert.ok(range, 'Node-RED declares engines.node');
    assert.ok(satisfies(process.version, range), `Node ${process.version} satisfies Node-RED ${theirs.version}'s engines.node ${range}`);
  });

  it('engines.node is no looser than any run-time dependency asks (the palette installs with --engine-strict)', () => {
    const floor = /^>=\s*(\d+(?:\.\d+){0,2})$/.exec(ours.engines?.node ?? '')?.[1];
    assert.ok(floor, `engines.node is of the form >=X.Y.Z: ${ours.engines?.node}`);
    const lowest = `${floor}.0.0`.split('.').slice(0, 3).join('.');
    const deps = runtimeDependencies(ours, PROJECT_ROOT);
    assert.ok(deps.has('undici'), 'undici is a run-time dependency');
    for (const [name, dep] of deps) {
      const range = dep.engines?.node;
      if (range) assert.ok(satisfies(lowest, range), `${name}@${dep.version} needs Node ${range}; engines.node allows ${lowest}`);
    }
  });

  it("node-red.version starts at the lockfile's Node-RED, the oldest one CI runs (.ci/run)", () => {
    const lock = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string }> };
    const locked = lock.packages['node_modules/node-red']?.version;
    assert.ok(locked, 'the lockfile has node-red');
    const [major, minor] = parts(locked);
    assert.equal(ours['node-red']?.version, `>=${major}.${minor}.0`);
  });

  it('runs the Node and Node-RED the CI leg asked for', function () {
    const node = process.env['IPCAM_CI_NODE'];
    const nodeRed = process.env['IPCAM_CI_NODE_RED'];
    if (!node && !nodeRed) this.skip();
    if (node) assert.ok(`${process.versions.node}.`.startsWith(`${node}.`), `Node ${process.version} is ${node}.x`);
    if (nodeRed) assert.ok(`${red.version()}.`.startsWith(`${nodeRed}.`), `Node-RED ${red.version()} is ${nodeRed}.x`);
  });

  it('satisfies() reads the ranges as semver does', () => {
    assert.ok(satisfies('v20.18.1', '>=20.18.1'));
    assert.ok(!satisfies('v20.18.0', '>=20.18.1'));
    assert.ok(satisfies('v22.9.0', '>=22.9'));
    assert.ok(!satisfies('v22.8.9', '>=22.9'));
    assert.ok(satisfies('5.0.7', '>=4.1.0'));
    assert.ok(!satisfies('4.0.9', '>=4.1.0'));
    assert.ok(satisfies('v24.0.0', '>=20'));
  });
});
