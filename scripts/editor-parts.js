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

/** A node's dialog (nodes/<type>.html) with its shared rows. */
exports.withDialogParts = (text, name) => compose(text, name, 'IPCAM-PART', 'dialog', 'dialog part').text;

/** A help page (locales/en-US/<type>.html) with its shared entries; `count` parts were composed. */
exports.withHelpParts = (text, name) => compose(text, name, 'IPCAM-HELP', 'help', 'help part');

/**
 * A help page with its "Status:" line from the status vocabulary (the compiled lib/status in
 * dist/, so the root build must have compiled it): where the page says
 * `<!-- IPCAM-STATUS: <node type> -->`, the words a node of that type can show with their colour
 * and shape. A type with no words fails the build; `count` lines were written.
 */
exports.withStatusLines = (text, name) => {
  const { statusHelp } = require(path.resolve(__dirname, '..', 'dist', 'lib', 'status.js'));
  let count = 0;
  const out = text.replace(/^([ \t]*)<!-- IPCAM-STATUS: ([a-z0-9-]+) -->[ \t]*\n/gm, (_, indent, type) => {
    count++;
    return `${indent}<p>${statusHelp(type)}</p>\n`;
  });
  if (out.includes('<!-- IPCAM-STATUS')) throw new Error(`${name}: a status placeholder is not on a line of its own`);
  return { text: out, count };
};
