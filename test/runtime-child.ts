import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { linkDashboard, userDirWithPackage, waitForHttp } from '../scripts/start';

/** A node of a flow as the admin API takes it. */
export interface FlowNode {
  id: string;
  type: string;
  [key: string]: unknown;
}

/** What a runtime is started with beyond the defaults (benches); every field is optional. */
export interface ChildRuntimeOptions {
  /** Extra directory of node files (a `.js` beside a `.html`), as the `nodesDir` setting. */
  nodesDir?: string;
  /** More options for node, before Node-RED's script (e.g. `--cpu-prof`, `--heapsnapshot-signal=SIGUSR2`). */
  nodeArgs?: string[];
  /** More settings, as JavaScript properties of the settings object (e.g. `adminAuth: {...},`). */
  extraSettings?: string;
  /** Dashboard 2 installed beside this package (as `npm start` has it). */
  dashboard?: boolean;
  /**
   * Watch the event loop for `loopDelay()`. Off unless asked: the watch is a 10 ms timer, 100
   * wakeups a second that a bench's floor does not pay.
   */
  watchLoopDelay?: boolean;
}

/** What the runtime reports of itself after a full garbage collection. */
export interface RuntimeProbe {
  rss: number;
  heapUsed: number;
  /** What V8 has reserved for its heap, used or not: it grows in steps (its young generation under a high allocation rate) and is kept after a GC, and RSS follows it. */
  heapTotal: number;
  /** Memory outside the V8 heap held by JS objects (Buffers among it). */
  external: number;
  fds: number;
  /** Of external, the memory of ArrayBuffers and Buffers. */
  arrayBuffers: number;
  /**
   * Of heapTotal, the young generation: V8 grows it to tens of MB under a burst of allocation and
   * keeps it while the process allocates steadily, whatever holds memory.
   */
  newSpace: number;
  /** Device heartbeats made and not closed (one per deployed ipcam-device; -1 when unknown). */
  heartbeats: number;
}

/** CPU time the runtime process has used since it started (microseconds, `process.cpuUsage()`). */
export interface RuntimeCpu {
  user: number;
  system: number;
}

/**
 * A real Node-RED runtime in a child process with this package installed, for behaviour that
 * depends on process lifetime (crashes, leaks, redeploys). It runs with --expose-gc, and its
 * settings add one admin route, `GET /_probe`, that collects garbage and answers RSS, heap and
 * open file descriptors; `GET /_cpu`, the process's CPU time, without collecting anything; and,
 * with `watchLoopDelay`, `GET /_loop-delay`, the longest event-loop block since the last ask.
 */
export class ChildRuntime {
  /** Everything the runtime printed (a crash shows here). */
  output = '';
  exitCode: number | null | undefined;
  private readonly userDir = userDirWithPackage('ipcam-runtime-');
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private url = '';

  constructor(private readonly options: ChildRuntimeOptions = {}) {}

  /** The admin API's base URL, e.g. `http://127.0.0.1:1880` (set by `start`). */
  get adminUrl(): string {
    return this.url;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** True while the process runs. */
  get alive(): boolean {
    return this.child !== undefined && this.exitCode === undefined;
  }

  async start(): Promise<void> {
    const port = await freePort();
    this.url = `http://127.0.0.1:${port}`;
    writeFileSync(join(this.userDir, 'settings.js'), settingsFile(port, this.options));
    if (this.options.dashboard) linkDashboard(this.userDir);
    const child = spawn(process.execPath, ['--expose-gc', ...(this.options.nodeArgs ?? []), require.resolve('node-red/red.js'), '--userDir', this.userDir, '--settings', join(this.userDir, 'settings.js')], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    const keep = (chunk: Buffer): void => {
      // Bounded: the last 256 kB is enough to show a crash.
      this.output = (this.output + chunk.toString('utf8')).slice(-256 * 1024);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    this.exited = new Promise<void>((resolve) =>
      child.once('exit', (code) => {
        this.exitCode = code;
        resolve();
      }),
    );
    await waitForHttp(`${this.url}/_probe`, this.exited);
  }

  /** A full deploy through the admin API (every node stopped and started again). */
  async deploy(flows: FlowNode[]): Promise<void> {
    const res = await fetch(`${this.url}/flows`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'node-red-deployment-type': 'full', 'node-red-api-version': 'v2' },
      body: JSON.stringify({ flows }),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`deploy answered ${res.status}: ${text}`);
  }

  async probe(): Promise<RuntimeProbe> {
    const res = await fetch(`${this.url}/_probe`);
    return (await res.json()) as RuntimeProbe;
  }

  /**
   * A probe that gives the collector time to return freed pages to the system before RSS is
   * read: collect, wait `settleMs`, collect again. RSS read right after a collection still
   * holds pages that are being released.
   */
  async settledProbe(settleMs = 500): Promise<RuntimeProbe> {
    const res = await fetch(`${this.url}/_probe?settle=${Math.max(0, Math.min(10_000, Math.round(settleMs)))}`);
    return (await res.json()) as RuntimeProbe;
  }

  /**
   * The longest the runtime's event loop was blocked since the last call (ms, from
   * perf_hooks' monitorEventLoopDelay at a 10 ms resolution); each call starts a new measurement.
   */
  async loopDelay(): Promise<number> {
    if (this.options.watchLoopDelay !== true) throw new Error('loopDelay() needs a runtime started with watchLoopDelay');
    const res = await fetch(`${this.url}/_loop-delay`);
    return ((await res.json()) as { maxMs: number }).maxMs;
  }

  /** CPU time used so far; cheap enough to sample while measuring idle. */
  async cpu(): Promise<RuntimeCpu> {
    const res = await fetch(`${this.url}/_cpu`);
    return (await res.json()) as RuntimeCpu;
  }

  /** The user dir (files a flow writes land here). */
  get dir(): string {
    return this.userDir;
  }

  async stop(): Promise<void> {
    if (this.alive) this.child?.kill('SIGINT');
    const forced = setTimeout(() => this.child?.kill('SIGKILL'), 10_000);
    await this.exited;
    clearTimeout(forced);
    rmSync(this.userDir, { recursive: true, force: true });
  }
}

function settingsFile(port: number, options: ChildRuntimeOptions): string {
  const { nodesDir, extraSettings: extra } = options;
  return `const loopDelay = ${options.watchLoopDelay === true ? "require('perf_hooks').monitorEventLoopDelay({ resolution: 10 })" : 'undefined'};
if (loopDelay) loopDelay.enable();
module.exports = {${nodesDir === undefined ? '' : `
  nodesDir: ${JSON.stringify(nodesDir)},`}${extra === undefined ? '' : `
  ${extra}`}
  uiHost: '127.0.0.1',
  uiPort: ${port},
  flowFile: 'flows.json',
  credentialSecret: false,
  telemetry: { enabled: false },
  diagnostics: { enabled: false },
  editorTheme: { tours: false, projects: { enabled: false } },
  logging: { console: { level: 'warn', metrics: false, audit: false } },
  httpAdminMiddleware: function (req, res, next) {
    if (req.url === '/_loop-delay' && loopDelay) {
      const maxMs = loopDelay.max / 1e6;
      loopDelay.reset();
      res.setHeader('content-type', 'application/json');
      return res.end(JSON.stringify({ maxMs: maxMs }));
    }
    if (req.url === '/_cpu') {
      res.setHeader('content-type', 'application/json');
      return res.end(JSON.stringify(process.cpuUsage()));
    }
    const settled = req.url.startsWith('/_probe?settle=');
    if (req.url !== '/_probe' && !settled) return next();
    const answer = function () {
      global.gc();
      global.gc();
      const fds = require('fs').readdirSync('/proc/self/fd').length;
      const memory = process.memoryUsage();
      const young = require('v8').getHeapSpaceStatistics().find(function (s) { return s.space_name === 'new_space'; });
      const newSpace = young ? young.space_size : 0;
      res.setHeader('content-type', 'application/json');
      let heartbeats = -1;
      try {
        heartbeats = require('node-red-contrib-ipcam/dist/lib/health/heartbeat.js').Heartbeat.open;
      } catch (err) {
        // An older build without device health.
      }
      res.end(JSON.stringify({ rss: memory.rss, heapUsed: memory.heapUsed, fds: fds, heapTotal: memory.heapTotal, external: memory.external, arrayBuffers: memory.arrayBuffers, newSpace: newSpace, heartbeats: heartbeats }));
    };
    if (!settled) return answer();
    global.gc();
    setTimeout(answer, Math.min(10000, Number(req.url.slice('/_probe?settle='.length)) || 0));
  },
};
`;
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
