/**
 * lib/ has no import cycles (the simulator's sections, the operation table and the codecs load in
 * one order) and never reaches node-red or nodes/. Read from the compiled requires, which keep
 * only the imports that load code (type-only imports are erased).
 */
import { strict as assert } from 'node:assert';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

const LIB = resolve(__dirname, '..', 'lib');

function jsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? jsFiles(path) : name.endsWith('.js') ? [path] : [];
  });
}

function localRequires(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/require\("(\.{1,2}\/[^"]+)"\)/g)].map((m) => {
    const target = resolve(dirname(file), m[1] as string);
    return target.endsWith('.js') ? target : `${target}.js`;
  });
}

describe('lib/ import graph', function () {
  const files = jsFiles(LIB);
  const graph = new Map(files.map((f) => [f, localRequires(f).map((t) => (files.includes(t) ? t : t.replace(/\.js$/, '/index.js')))]));

  it('has no cycle', function () {
    const state = new Map<string, 'visiting' | 'done'>();
    const cycles: string[] = [];
    const visit = (file: string, path: string[]): void => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'visiting') {
        cycles.push([...path.slice(path.indexOf(file)), file].map((f) => relative(LIB, f)).join(' -> '));
        return;
      }
      state.set(file, 'visiting');
      for (const next of graph.get(file) ?? []) visit(next, [...path, file]);
      state.set(file, 'done');
    };
    for (const file of files) visit(file, []);
    assert.deepEqual(cycles, []);
  });

  it('lib/cgi and lib/xml are codecs: they never load lib/ops (nor the answer path, the transport, health, streams, events or the simulator above them)', function () {
    const codecs = files.filter((f) => /^(cgi|xml)\//.test(relative(LIB, f).split(sep).join('/')));
    assert.ok(codecs.length > 0, 'no codec files found');
    const upward = codecs.flatMap((f) =>
      (graph.get(f) ?? [])
        .map((t) => relative(LIB, t).split(sep).join('/'))
        .filter((t) => /^(ops|stream|events|simulator|transport|health)\//.test(t) || t === 'answer.js')
        .map((t) => `${relative(LIB, f)} -> ${t}`),
    );
    assert.deepEqual(upward, []);
  });

  it('every device request passes the one answer path: only lib/answer sends through a device client', function () {
    const NODES = resolve(__dirname, '..', 'nodes');
    // The Dashboard 2 widgets' nodes too (their own package, compiled beside its sources).
    const WIDGET_NODES = resolve(__dirname, '..', '..', 'packages', 'node-red-dashboard-2-ipcam', 'dist', 'nodes');
    const widgetNodes = jsFiles(WIDGET_NODES);
    assert.ok(widgetNodes.length > 0, `no compiled widget nodes in ${WIDGET_NODES}`);
    const senders = [...files, ...jsFiles(NODES), ...widgetNodes]
      .filter((f) => !/[/\\](transport|simulator)[/\\]/.test(f))
      .filter((f) => /\b(client|via|this\.client|deviceClient\(\))\.(request|openStream)\(/.test(readFileSync(f, 'utf8')))
      .map((f) => relative(resolve(__dirname, '..'), f).split(sep).join('/'));
    assert.deepEqual(senders.sort(), ['lib/answer.js']);
  });

  it('never loads node-red or a node', function () {
    const offending = files.filter((f) => /require\("(node-red|@node-red\/[^"]*)"\)|require\("[^"]*\/nodes\//.test(readFileSync(f, 'utf8')));
    assert.deepEqual(offending.map((f) => relative(LIB, f)), []);
  });
});
