/**
 * Which Node and Node-RED this run is on: printed for the CI log and checked against what the
 * package promises (`engines.node`, `node-red.version`) and, in a CI leg, against what the leg says
 * it runs (IPCAM_CI_NODE, IPCAM_CI_NODE_RED). A leg that silently ran another Node (a `node`
 * on npm's PATH) or the lockfile's Node-RED instead of the one it installed fails here.
 */
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { PROJECT_ROOT } from './helpers';

interface PackageJson {
  version: string;
  engines?: { node?: string };
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
