import { strict as assert } from 'node:assert';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { IpcamError } from '../lib/errors/errors';
import { resolve } from 'node:path';
import type { NodeSpec } from '../lib/node-spec';
import type { RecordedRequest, Simulator } from '../lib/simulator';
import type { StatusWordName } from '../lib/status/status';

/** Tests run compiled from dist/test; fixtures and captures stay in the source tree. */
export const PROJECT_ROOT = resolve(__dirname, '..', '..');
/** The Dashboard 2 widgets, a package of their own in this repository (an npm workspace). */
export const WIDGETS_ROOT = resolve(PROJECT_ROOT, 'packages', 'node-red-dashboard-2-ipcam');
/** Both packages of node types: each has a folder per node in nodes/ and a "node-red" section in package.json. */
export const NODE_PACKAGES = [PROJECT_ROOT, WIDGETS_ROOT];

/** The node folders of a package: nodes/<type>/ holding <type>.ts (runtime), <type>.html (dialog) and its help. */
export function nodeFolders(root: string): string[] {
  return readdirSync(resolve(root, 'nodes'), { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(resolve(root, 'nodes', d.name, `${d.name}.ts`)))
    .map((d) => d.name);
}

/** The spec of each node folder of a package (nodes/<type>/spec.ts), as its build compiled it. */
export function nodeSpecs(root: string): NodeSpec[] {
  return nodeFolders(root).map((type) => (module.require(resolve(root, 'dist', 'nodes', type, 'spec.js')) as { spec: NodeSpec }).spec);
}

/** The status words of every node type of both packages whose spec names some (config nodes name none). */
export function statusWordsByType(): ReadonlyMap<string, readonly StatusWordName[]> {
  return new Map(NODE_PACKAGES.flatMap(nodeSpecs).flatMap((spec) => (spec.status ? [[spec.type, spec.status] as const] : [])));
}

/** Where the files of node `type` are, in whichever package holds it: its dialog, and its help as written and as shipped. */
export function nodeFiles(type: string): { root: string; dialog: string; help: string; shippedHelp: string } {
  const root = NODE_PACKAGES.find((r) => existsSync(resolve(r, 'nodes', type, `${type}.ts`)));
  if (root === undefined) throw new Error(`no node folder nodes/${type}/ in either package`);
  return {
    root,
    dialog: resolve(root, 'nodes', type, `${type}.html`),
    help: resolve(root, 'nodes', type, 'locales', 'en-US', `${type}.html`),
    shippedHelp: resolve(root, 'dist', 'nodes', type, 'locales', 'en-US', `${type}.html`),
  };
}

/** The node types a package's package.json declares. */
export function declaredNodeTypes(root: string): string[] {
  return Object.keys((JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8')) as { 'node-red': { nodes: Record<string, string> } })['node-red'].nodes);
}

export function fixture(name: string): string {
  return readFileSync(resolve(PROJECT_ROOT, 'test', 'fixtures', name), 'utf8');
}

export const SIM_USER = 'admin';
/** A password with characters that would break naive encoding, and easy to grep for in output. */
export const SIM_PASSWORD = 'S3cr3t:pa ss"wörd';

/** Polls until `check` holds; fails after a generous limit. It waits, it asserts no timing. */
export async function waitFor(what: string, check: () => boolean, limitMs = 15_000): Promise<void> {
  const end = Date.now() + limitMs;
  while (!check()) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

interface QuietWatch {
  what: string;
  /** What came after the quiet began, shown. */
  late(): string[];
  stop(): void;
}
const quietWatches: QuietWatch[] = [];

/**
 * "Nothing (more) happens" from now on: call it where the quiet begins, before the fixed wait that
 * gives a stray request or message its chance, and keep the check after the wait. What is watched:
 * the simulator's requests (each matching request it records from now on, resetRequests or not);
 * a log that only grows (a fake device's requests, a helper node's messages, a list of states):
 * matching entries past its length now; or a counter (connections accepted): any rise. What came
 * also fails the test when the test has ended (after its suite's own teardown), so what comes after
 * the wait fails it too; `end()` checks and stops the watch earlier, where the test goes on to ask
 * for more.
 */
export function expectQuiet(sim: Simulator, what: string, match?: (request: RecordedRequest) => boolean): { end(): void };
export function expectQuiet<T>(log: readonly T[], what: string, match?: (entry: T) => boolean): { end(): void };
export function expectQuiet(counter: () => number, what: string): { end(): void };
export function expectQuiet(source: Simulator | readonly unknown[] | (() => number), what: string, match: (entry: never) => boolean = () => true): { end(): void } {
  const matches = match as (entry: unknown) => boolean;
  let watch: QuietWatch;
  if (typeof source === 'function') {
    const from = source();
    watch = { what, late: () => Array.from({ length: Math.max(0, source() - from) }, (_, i) => `count ${from} -> ${from + i + 1}`), stop: () => undefined };
  } else if (Array.isArray(source)) {
    const log: readonly unknown[] = source;
    const from = log.length;
    watch = { what, late: () => log.slice(from).filter(matches).map(shownEntry), stop: () => undefined };
  } else {
    const late: RecordedRequest[] = [];
    const stop = (source as Simulator).watchRequests((request) => void (matches(request) && late.push(request)));
    watch = { what, late: () => late.map(shownEntry), stop };
  }
  quietWatches.push(watch);
  return {
    end: () => {
      watch.stop();
      quietWatches.splice(quietWatches.indexOf(watch) >>> 0, 1);
      assert.deepEqual(watch.late(), [], what);
    },
  };
}

function shownEntry(entry: unknown): string {
  if (typeof entry === 'string') return entry.split('\r\n')[0] ?? '';
  if (isRecordedRequest(entry)) return `${entry.method} ${entry.path}${entry.rawQuery ? `?${entry.rawQuery}` : ''}`;
  const shown = JSON.stringify(entry, (_key, value: unknown) => (Buffer.isBuffer(value) || (isRecord(value) && value['type'] === 'Buffer') ? '<bytes>' : value)) ?? String(entry);
  return shown.length > 200 ? `${shown.slice(0, 200)}...` : shown;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

function isRecordedRequest(entry: unknown): entry is RecordedRequest {
  return isRecord(entry) && typeof entry['method'] === 'string' && typeof entry['path'] === 'string' && 'rawQuery' in entry;
}

// The teardown check of expectQuiet, for every test file (mocha's root suite): it runs after each
// test's own afterEach hooks and fails that test (not the hook, which would stop the run).
if (typeof afterEach === 'function') {
  afterEach(function () {
    const failed = quietWatches.splice(0).flatMap((watch) => {
      watch.stop();
      let late: string[];
      try {
        late = watch.late();
      } catch (err) {
        // A hook that throws would stop the run: the test fails instead.
        late = [`(not readable at teardown: ${String(err)})`];
      }
      return late.length === 0 ? [] : [`${watch.what}: ${late.length} after the quiet began: ${late.slice(0, 5).join(', ')}`];
    });
    if (failed.length > 0) (this.test as Mocha.Hook).error(new Error(failed.join('\n')));
  });
}

/** The IpcamError a promise rejects with, checked for its code (and message when given). */
export async function expectRejection(promise: Promise<unknown>, code: IpcamError['code'], message?: RegExp): Promise<IpcamError> {
  let caught: unknown;
  try {
    await promise;
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof IpcamError, `expected an IpcamError ${code}, got ${String(caught)}`);
  assert.equal(caught.code, code, caught.message);
  if (message) assert.match(caught.message, message);
  return caught;
}

/**
 * Real device posts (base64 images replaced by placeholders), copied from the project's shared
 * captures so that a clone tests on its own; Apache-2.0, see the LICENSE beside them.
 */
export const CAPTURES = resolve(PROJECT_ROOT, 'test', 'fixtures', 'captures', 'tvt-events');

/** A valid JPEG grown to about `size` bytes with comment segments after SOI, as real pictures run. */
export function jpegGrownTo(jpeg: Buffer, size: number): Buffer {
  const segments: Buffer[] = [];
  for (let missing = size - jpeg.length; missing > 4; ) {
    const payload = Math.min(65_533, missing - 4);
    const segment = Buffer.alloc(payload + 4, 0x5a);
    segment.writeUInt16BE(0xfffe, 0);
    segment.writeUInt16BE(payload + 2, 2);
    segments.push(segment);
    missing -= segment.length;
  }
  return Buffer.concat([jpeg.subarray(0, 2), ...segments, jpeg.subarray(2)]);
}

/** Deterministic PRNG (mulberry32), so that a failing random case can be replayed from its seed. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
