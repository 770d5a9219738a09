/**
 * The README's operation tables and docs/operations.md keep in step with the table in lib/ops:
 * every operation has its row, naming its class and each of its parameters, and its section in the docs.
 */
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { EDGE_RECORD_OPERATIONS, REQUEST_OPERATIONS } from '../lib/ops';
import { PROJECT_ROOT } from './helpers';

const README = readFileSync(join(PROJECT_ROOT, 'README.md'), 'utf8');
const DOCS = readFileSync(join(PROJECT_ROOT, 'docs', 'operations.md'), 'utf8');

/** The table row whose first cell names `name` (`| \`a\` / \`b\` (D) | ...`). */
function rowOf(name: string): string | undefined {
  return README.split('\n').find((line) => line.startsWith('| ') && (line.split('|')[1] ?? '').includes(`\`${name}\``));
}

describe('README and docs/operations.md list every operation', function () {
  for (const [tableName, table] of [['ipcam-request', REQUEST_OPERATIONS], ['ipcam-edgerecord', EDGE_RECORD_OPERATIONS]] as const) {
    for (const op of table.values()) {
      it(`${tableName} ${op.name}: a README row naming its class, its parameters${op.destructive ? ' and (D)' : ''}, and a docs section`, function () {
        const row = rowOf(op.name);
        assert.ok(row, `no README row for ${op.name}`);
        const fields = op.params.limits.type === 'object' ? Object.keys(op.params.limits.fields) : [];
        for (const field of fields) assert.match(row, new RegExp(`\\b${field}\\b`), `${op.name}: ${field} is not in its README row`);
        assert.equal(/\(D\)/.test(row.split('|')[1] ?? ''), op.destructive, `${op.name}: (D) in the README must match the table`);
        assert.match(row.split('|')[2] ?? '', new RegExp(`\\b${op.class}\\b`), `${op.name}: its README row must name its class ${op.class}`);
        assert.ok(DOCS.includes(`\`${op.name}\``) || DOCS.includes(`### ${op.name}`), `${op.name} has no section in docs/operations.md`);
      });
    }
  }
});

describe("README's flows", function () {
  /** Every ```json block of the README that is a flow (a list of nodes). */
  const flows = [...README.matchAll(/```json\n([\s\S]*?)```/g)]
    .map((m) => JSON.parse(m[1] ?? '') as unknown)
    .filter((v): v is Array<Record<string, unknown>> => Array.isArray(v) && v.every((n) => typeof n === 'object' && n !== null && 'type' in n));

  it('import laid out: every node has its own x/y (none stacked on one spot)', function () {
    assert.ok(flows.length >= 2, `${flows.length} flows found in the README`);
    for (const flow of flows) {
      const at = new Set<string>();
      for (const node of flow) {
        assert.ok(typeof node['x'] === 'number' && typeof node['y'] === 'number', `${String(node['id'])} (${String(node['type'])}) has no x/y`);
        const spot = `${node['x']},${node['y']}`;
        assert.ok(!at.has(spot), `${String(node['id'])} stands on another node's spot ${spot}`);
        at.add(spot);
      }
    }
  });
});
