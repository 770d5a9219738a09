// Builds the widget package: compiles its node files (against node-red-contrib-ipcam's dist/,
// which the repository's root build makes first), places each node's dialog and help where
// Node-RED looks for them (beside the compiled .js, with the shared parts composed in, as the
// main package does), and bundles the Vue components with Vite into resources/.
const assert = require('node:assert');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const pkg = path.resolve(__dirname, '..');
const repo = path.resolve(pkg, '..', '..');
const out = path.join(pkg, 'dist');
const nodesOut = path.join(out, 'nodes');
const { placeNodeFolders } = require(path.join(repo, 'scripts', 'editor-parts.js'));

// `--release` (npm pack and publish, through `prepack`): no source maps, as in the main package.
const release = process.argv.includes('--release');

const main = path.join(repo, 'dist', 'lib', 'index.d.ts');
if (!fs.existsSync(main)) throw new Error(`build: ${path.relative(repo, main)} is missing: build node-red-contrib-ipcam first (npm run build at the repository root)`);

console.log(`build (node-red-dashboard-2-ipcam): compiling the widget nodes into ${path.relative(repo, out)}/ (tsc${release ? ', release: no source maps' : ''})`);
fs.rmSync(out, { recursive: true, force: true });
const tscArgs = [require.resolve('typescript/bin/tsc'), '-p', pkg];
if (release) tscArgs.push('--sourceMap', 'false');
execFileSync(process.execPath, tscArgs, { stdio: 'inherit' });

// A folder per widget node (nodes/<type>/), placed as the main package places its own: dialog and
// help with their shared parts, the "Status:" line from the main package's vocabulary (lib/status),
// and the palette icon (one file in the repository, a copy in each package).
const placed = placeNodeFolders(pkg, nodesOut);
console.log(`build (node-red-dashboard-2-ipcam): ${placed.types.length} widget node folders placed in dist/nodes/<type>/ (dialog, help with ${placed.parts} shared parts and ${placed.lines} status lines, icons)`);

// Each widget folder's spec (nodes/<type>/spec.ts) names its settings; the dialogs load the main
// package's rules, which that package's build wrote from lib/widgets/settings' WIDGET_NODE_SETTINGS
// (this package is built after it). A spec whose settings differ from that row fails the build.
{
  const { settingsLimits } = require(path.join(repo, 'dist', 'lib', 'settings.js'));
  const { WIDGET_SETTINGS_SPECS } = require(path.join(repo, 'dist', 'lib', 'widgets', 'settings.js'));
  const ours = settingsLimits(placed.specs).nodes;
  const rules = settingsLimits(WIDGET_SETTINGS_SPECS).nodes;
  assert.deepStrictEqual(ours, rules, 'the widget specs (nodes/<type>/spec.ts) and lib/widgets/settings.ts WIDGET_NODE_SETTINGS must name the same node types and settings');
}

execFileSync(process.execPath, [path.join(__dirname, 'build-ui.mjs'), ...(release ? ['--release'] : [])], { stdio: 'inherit' });
