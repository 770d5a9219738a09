// Compiles the TypeScript and places the editor files where Node-RED looks for them:
// each node's .html, and locales/ and icons/, beside the compiled node .js files.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const out = path.join(root, 'dist');

fs.rmSync(out, { recursive: true, force: true });
execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', root], { stdio: 'inherit' });

const nodesOut = path.join(out, 'nodes');
for (const file of fs.readdirSync(path.join(root, 'nodes'))) {
  if (file.endsWith('.html')) fs.copyFileSync(path.join(root, 'nodes', file), path.join(nodesOut, file));
}
for (const dir of ['locales', 'icons']) {
  const from = path.join(root, dir);
  if (fs.existsSync(from)) fs.cpSync(from, path.join(nodesOut, dir), { recursive: true });
}
fs.chmodSync(path.join(out, 'lib', 'simulator', 'cli.js'), 0o755);
