// Builds the widget package: compiles its node files (against node-red-contrib-ipcam's dist/,
// which the repository's root build makes first), places each node's dialog and help where
// Node-RED looks for them (beside the compiled .js, with the shared parts composed in, as the
// main package does), and bundles the Vue components with Vite into resources/.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const pkg = path.resolve(__dirname, '..');
const repo = path.resolve(pkg, '..', '..');
const out = path.join(pkg, 'dist');
const nodesOut = path.join(out, 'nodes');
const { withDialogParts, withHelpParts, withStatusLines } = require(path.join(repo, 'scripts', 'editor-parts.js'));

// `--release` (npm pack and publish, through `prepack`): no source maps, as in the main package.
const release = process.argv.includes('--release');

const main = path.join(repo, 'dist', 'lib', 'index.d.ts');
if (!fs.existsSync(main)) throw new Error(`build: ${path.relative(repo, main)} is missing: build node-red-contrib-ipcam first (npm run build at the repository root)`);

console.log(`build (node-red-dashboard-2-ipcam): compiling the widget nodes into ${path.relative(repo, out)}/ (tsc${release ? ', release: no source maps' : ''})`);
fs.rmSync(out, { recursive: true, force: true });
const tscArgs = [require.resolve('typescript/bin/tsc'), '-p', pkg];
if (release) tscArgs.push('--sourceMap', 'false');
execFileSync(process.execPath, tscArgs, { stdio: 'inherit' });

for (const file of fs.readdirSync(path.join(pkg, 'nodes')).filter((f) => f.endsWith('.html'))) {
  fs.writeFileSync(path.join(nodesOut, file), withDialogParts(fs.readFileSync(path.join(pkg, 'nodes', file), 'utf8'), `nodes/${file}`));
}
const helpOut = path.join(nodesOut, 'locales', 'en-US');
fs.mkdirSync(helpOut, { recursive: true });
let composed = 0;
for (const file of fs.readdirSync(path.join(pkg, 'locales', 'en-US')).filter((f) => f.endsWith('.html'))) {
  const { text, count } = withHelpParts(fs.readFileSync(path.join(pkg, 'locales', 'en-US', file), 'utf8'), `locales/en-US/${file}`);
  composed += count;
  // The widget's "Status:" line, from the main package's status vocabulary (lib/status).
  fs.writeFileSync(path.join(helpOut, file), withStatusLines(text, `locales/en-US/${file}`).text);
}
// The palette icon is the main package's: one file in the repository, a copy in each package.
fs.cpSync(path.join(repo, 'icons'), path.join(nodesOut, 'icons'), { recursive: true });
console.log(`build (node-red-dashboard-2-ipcam): dialogs, help (${composed} shared parts composed) and icons placed beside the compiled nodes`);

execFileSync(process.execPath, [path.join(__dirname, 'build-ui.mjs'), ...(release ? ['--release'] : [])], { stdio: 'inherit' });
