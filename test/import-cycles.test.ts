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

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? tsFiles(path) : name.endsWith('.ts') && !name.endsWith('.d.ts') ? [path] : [];
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

  it('has no arrow running back up: its folders (and top-level files) import each other in one order, and a folder only those below it, type imports included', function () {
    // The compiled requires above lose `import type`; an arrow back up is as often a type (a
    // stream supervisor naming the health class above it), so the sources are read here.
    const SOURCES = resolve(__dirname, '..', '..', 'lib');
    const unitOf = (file: string): string => relative(SOURCES, file).split(sep)[0] as string;
    const arrows = new Map<string, Map<string, string>>();
    for (const file of tsFiles(SOURCES)) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/\b(?:from\s+|import\s*\(\s*)'(\.{1,2}\/[^']+)'/g)) {
        const from = unitOf(file);
        const to = unitOf(resolve(dirname(file), m[1] as string));
        if (from === to || to.startsWith('..')) continue;
        if (!arrows.has(from)) arrows.set(from, new Map());
        // One file that makes the arrow, to name it in the failure.
        if (!arrows.get(from)?.has(to)) arrows.get(from)?.set(to, relative(SOURCES, file).split(sep).join('/'));
      }
    }
    assert.ok(arrows.size > 5, 'no imports found in lib/ sources');
    const cycles: string[] = [];
    const state = new Map<string, 'visiting' | 'done'>();
    const visit = (unit: string, path: string[]): void => {
      if (state.get(unit) === 'done') return;
      if (state.get(unit) === 'visiting') {
        const loop = [...path.slice(path.indexOf(unit)), unit];
        cycles.push(loop.map((u, i) => (i === 0 ? u : `${u} (${arrows.get(loop[i - 1] as string)?.get(u) ?? '?'})`)).join(' -> '));
        return;
      }
      state.set(unit, 'visiting');
      for (const next of arrows.get(unit)?.keys() ?? []) visit(next, [...path, unit]);
      state.set(unit, 'done');
    };
    for (const unit of arrows.keys()) visit(unit, []);
    assert.deepEqual(cycles, []);
    // The folders' heights: an arrow runs only down. Siblings (the same height) never import each
    // other: ops and streams both run exchanges over the answer path; a parser both need is a codec.
    // At the bottom the error type and its texts, then the input checks and the answers' budgets
    // every codec uses; at the top the node statuses and the widgets, which name what runs below.
    const HEIGHT: Record<string, number> = {
      errors: 1,
      input: 2,
      safety: 2,
      cgi: 3,
      xml: 3,
      transport: 4,
      stream: 5,
      ops: 5,
      health: 6,
      events: 6,
      discovery: 6,
      widgets: 6,
      simulator: 7,
      status: 7,
    };
    const upward = [...arrows].flatMap(([from, tos]) =>
      [...tos]
        .filter(([to]) => HEIGHT[from] !== undefined && HEIGHT[to] !== undefined && (HEIGHT[from] as number) <= (HEIGHT[to] as number))
        .map(([to, file]) => `${from} -> ${to} (${file})`),
    );
    assert.deepEqual(upward, []);
  });

  it('lib/cgi and lib/xml are codecs: they never load lib/ops (nor the answer path, the transport, health, streams, events, the simulator, node statuses or widgets above them)', function () {
    const codecs = files.filter((f) => /^(cgi|xml)\//.test(relative(LIB, f).split(sep).join('/')));
    assert.ok(codecs.length > 0, 'no codec files found');
    const upward = codecs.flatMap((f) =>
      (graph.get(f) ?? [])
        .map((t) => relative(LIB, t).split(sep).join('/'))
        .filter((t) => /^(ops|stream|events|simulator|transport|health|status|widgets)\//.test(t) || t === 'answer.js')
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
