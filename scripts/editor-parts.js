// Parts of the dialogs and help written once and composed in at build time, for both packages of
// this repository (the nodes here and the Dashboard 2 widgets in packages/): a dialog's
// `<!-- IPCAM-PART: <part> -->` line becomes docs/dialog/<part>.html, a help page's
// `<!-- IPCAM-HELP: <part> -->` line docs/help/<part>.html. A placeholder naming no part, or not on
// a line of its own, fails the build.
const fs = require('node:fs');
const path = require('node:path');

const docs = path.resolve(__dirname, '..', 'docs');

function compose(text, name, marker, dir, what) {
  let count = 0;
  const pattern = new RegExp(`^[ \\t]*<!-- ${marker}: ([a-z0-9-]+) -->[ \\t]*\\n`, 'gm');
  // A function, not a string: `$'` and `$&` in a part are not replacement patterns.
  const out = text.replace(pattern, (_, part) => {
    const partFile = path.join(docs, dir, `${part}.html`);
    if (!fs.existsSync(partFile)) throw new Error(`${name} asks for ${what} "${part}": there is no docs/${dir}/${part}.html`);
    count++;
    return fs.readFileSync(partFile, 'utf8');
  });
  if (out.includes(`<!-- ${marker}`)) throw new Error(`${name}: a ${what} placeholder is not on a line of its own`);
  return { text: out, count };
}

/** A node's dialog (nodes/<type>/<type>.html) with its shared rows. */
exports.withDialogParts = (text, name) => compose(text, name, 'IPCAM-PART', 'dialog', 'dialog part').text;

/** A help page (nodes/<type>/locales/en-US/<type>.html) with its shared entries; `count` parts were composed. */
exports.withHelpParts = (text, name) => compose(text, name, 'IPCAM-HELP', 'help', 'help part');

/**
 * A help page with its "Status:" line from the status vocabulary (the compiled lib/status in
 * dist/, so the root build must have compiled it): where the page says
 * `<!-- IPCAM-STATUS: <node type> -->`, the words its folder's spec names (`spec.status`) with
 * their colour and shape. A placeholder naming another type, or a spec without words, fails the
 * build; `count` lines were written.
 */
exports.withStatusLines = (text, name, spec) => {
  const { statusHelp } = require(path.resolve(__dirname, '..', 'dist', 'lib', 'status', 'status.js'));
  let count = 0;
  const out = text.replace(/^([ \t]*)<!-- IPCAM-STATUS: ([a-z0-9-]+) -->[ \t]*\n/gm, (_, indent, type) => {
    if (type !== spec.type) throw new Error(`${name}: the status placeholder names ${type}, the page is ${spec.type}'s`);
    if (!spec.status) throw new Error(`${name}: ${type}'s spec names no status words (spec.status)`);
    count++;
    return `${indent}<p>${statusHelp(spec.status)}</p>\n`;
  });
  if (out.includes('<!-- IPCAM-STATUS')) throw new Error(`${name}: a status placeholder is not on a line of its own`);
  return { text: out, count };
};

/**
 * Places the node folders of a package (`<root>/nodes/<type>/`: runtime, dialog, help) where
 * Node-RED looks for them beside the compiled runtime: `<out>/<type>/<type>.html` with its dialog
 * parts, `<out>/<type>/locales/<lang>/<type>.html` with its help parts and status line, and the
 * repository's icons (Node-RED takes a package's icons from the folder of each node's runtime).
 * The package's "node-red" list must name exactly these folders, as
 * `"<type>": "dist/nodes/<type>/<type>.js"`: a folder left out, or an entry without its folder,
 * fails the build. Returns the node types, their specs, and how many help parts and status lines
 * were composed.
 */
exports.placeNodeFolders = (root, out) => {
  const types = fs
    .readdirSync(path.join(root, 'nodes'), { withFileTypes: true })
    .filter((d) => d.isDirectory() && fs.existsSync(path.join(root, 'nodes', d.name, `${d.name}.ts`)))
    .map((d) => d.name)
    .sort();
  const listed = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'))['node-red'].nodes;
  const expected = Object.fromEntries(types.map((t) => [t, `dist/nodes/${t}/${t}.js`]));
  const wrong = [...new Set([...Object.keys(listed), ...types])].filter((t) => listed[t] !== expected[t]);
  if (wrong.length > 0) {
    throw new Error(`${path.basename(root)}/package.json "node-red".nodes must name each folder of nodes/ as "<type>": "dist/nodes/<type>/<type>.js"; these differ: ${wrong.join(', ')}`);
  }
  const specs = exports.nodeSpecs(root, out, types);
  let parts = 0;
  let lines = 0;
  for (const [i, type] of types.entries()) {
    const from = path.join(root, 'nodes', type);
    const to = path.join(out, type);
    const dialog = `${type}.html`;
    fs.writeFileSync(path.join(to, dialog), exports.withDialogParts(fs.readFileSync(path.join(from, dialog), 'utf8'), `nodes/${type}/${dialog}`));
    for (const lang of fs.readdirSync(path.join(from, 'locales'))) {
      const source = `nodes/${type}/locales/${lang}/${type}.html`;
      const help = exports.withHelpParts(fs.readFileSync(path.join(root, source), 'utf8'), source);
      const status = exports.withStatusLines(help.text, source, specs[i]);
      parts += help.count;
      lines += status.count;
      fs.mkdirSync(path.join(to, 'locales', lang), { recursive: true });
      fs.writeFileSync(path.join(to, 'locales', lang, `${type}.html`), status.text);
    }
    fs.cpSync(path.resolve(__dirname, '..', 'icons'), path.join(to, 'icons'), { recursive: true });
  }
  return { types, specs, parts, lines };
};

/**
 * The spec of each node folder of a package (`nodes/<type>/spec.ts`, compiled beside its runtime
 * as `<out>/<type>/spec.js`): what the folder declares of its node type (lib/node-spec.ts), its
 * settings' rules and payload keys. A folder without one, or whose spec names another type, fails
 * the build: the editor's rules are written from these, never from a hand-kept list.
 */
exports.nodeSpecs = (root, out, types) =>
  types.map((type) => {
    const file = path.join(out, type, 'spec.js');
    const where = path.relative(path.resolve(__dirname, '..'), path.join(root, 'nodes', type, 'spec.ts'));
    if (!fs.existsSync(file)) throw new Error(`${where} is missing: each node folder declares its settings there (export const spec: NodeSpec, lib/node-spec.ts)`);
    const { spec } = require(file);
    if (spec?.type !== type) throw new Error(`${where} must export \`spec\` of type '${type}' (it gives ${JSON.stringify(spec?.type)})`);
    return spec;
  });
