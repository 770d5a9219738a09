/**
 * The packages as a user gets them: `npm pack` of node-red-contrib-ipcam and of its Dashboard 2
 * widgets (node-red-dashboard-2-ipcam, packages/ of this repository), both tarballs installed
 * into a fresh Node-RED user dir the way the palette manager installs a package
 * (`--omit=dev --engine-strict`, one after the other), Node-RED started on it, every node type
 * and plugin of both registered with no error, the editor's files served (generated rules,
 * help, icons, examples), and a flow deployed through the admin API that takes a snapshot,
 * switches a relay and receives a plate event from the packed `ipcam-simulator` bin.
 *
 * Node-RED is started twice on that user dir: first without Dashboard 2 (the two widget nodes warn
 * that it is needed, everything else runs), then with `@flowfuse/node-red-dashboard` of the lock file
 * linked into it, offline: Dashboard 2 finds the widgets from the user dir's package.json as it
 * finds any third-party widget, serves their bundles from the packed widget package, and a page
 * in Chromium (playwright-core, Debian's /usr/bin/chromium) renders both widgets: the camera's
 * frame from the packed simulator and a posted plate in the plates widget's table.
 *
 * A file left out of a package.json `files` fails here, not on a user's machine.
 *
 * Usage: node dist/scripts/pack-check.js [--node-red DIR] [--expect-node-red 5.0] [--keep]
 *   --node-red         the Node-RED to start (default: the one installed beside this project)
 *   --expect-node-red  fail unless the started Node-RED's version starts with this
 *   --keep             keep the work dir (tarball, user dir, logs)
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';
import { launchBrowser } from '../test/browser';

const ROOT = resolve(__dirname, '..', '..');
const PACKAGE = 'node-red-contrib-ipcam';
/** The Dashboard 2 widgets, a package of their own (an npm workspace of this repository). */
const WIDGETS = 'node-red-dashboard-2-ipcam';
const WIDGETS_ROOT = join(ROOT, 'packages', WIDGETS);
const STEP_TIMEOUT_MS = 30_000;
const run = promisify(execFile);

const DASHBOARD = '@flowfuse/node-red-dashboard';

interface PackageJson {
  name: string;
  version: string;
  bin?: Record<string, string>;
  dependencies?: Record<string, string>;
  'node-red'?: { version?: string; nodes?: Record<string, string>; plugins?: Record<string, string> };
  'node-red-dashboard-2'?: { widgets?: Record<string, { output: string; component: string }> };
}

interface NodeSet {
  id: string;
  module: string;
  version?: string;
  types: string[];
  enabled: boolean;
  local?: boolean;
  err?: unknown;
}

interface PluginSet {
  id: string;
  module: string;
  enabled: boolean;
  err?: unknown;
  plugins?: Array<{ id: string; type?: string }>;
}

interface FlowNode {
  id: string;
  type: string;
  [key: string]: unknown;
}

/** What the smoke flow posts back: one entry per message that reached the end of a branch. */
interface Report {
  kind: string;
  value: unknown;
}

class CheckFailed extends Error {}

function fail(message: string): never {
  throw new CheckFailed(message);
}

function check(ok: unknown, message: string): void {
  if (!ok) fail(message);
}

function args(): { nodeRed: string; expectNodeRed?: string; keep: boolean } {
  const argv = process.argv.slice(2);
  const value = (flag: string): string | undefined => {
    const i = argv.indexOf(flag);
    if (i < 0) return undefined;
    const v = argv[i + 1];
    if (v === undefined) fail(`${flag} needs a value`);
    return v;
  };
  const nodeRed = value('--node-red') ?? dirname(require.resolve('node-red/package.json', { paths: [ROOT] }));
  const expectNodeRed = value('--expect-node-red');
  return { nodeRed: resolve(nodeRed), keep: argv.includes('--keep'), ...(expectNodeRed ? { expectNodeRed } : {}) };
}

function seconds(since: bigint): string {
  return `${(Number(process.hrtime.bigint() - since) / 1e9).toFixed(1)} s`;
}

function kib(bytes: number): string {
  return `${(bytes / 1024).toFixed(1)} KiB`;
}

/** Every file under `dir`, as paths relative to it with forward slashes. */
function walk(dir: string, base = dir): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name), base) : [relative(base, join(dir, e.name)).split('\\').join('/')]));
}

async function freePort(): Promise<number> {
  const server = createNetServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  server.close();
  await once(server, 'close');
  return port;
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, gone?: () => string | undefined): Promise<T> {
  const deadline = Date.now() + STEP_TIMEOUT_MS;
  while (Date.now() < deadline) {
    const why = gone?.();
    if (why) fail(`${what}: ${why}`);
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 200));
  }
  return fail(`${what}: nothing within ${STEP_TIMEOUT_MS / 1000} s`);
}

function canConnect(port: number): Promise<true | undefined> {
  return new Promise((done) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      done(true);
    });
    socket.once('error', () => done(undefined));
  });
}

// ---------------------------------------------------------------------------------------------

/**
 * `npm pack` (its `prepack` makes the release build) into `dir`, of the root package or of a
 * workspace; the tarball's path. The main package first: the widgets build against its dist/.
 */
async function pack(dir: string, workspace?: string): Promise<string> {
  mkdirSync(dir, { recursive: true });
  await run('npm', ['pack', '--pack-destination', dir, ...(workspace ? ['--workspace', workspace] : [])], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 });
  const tarballs = readdirSync(dir).filter((f) => f.endsWith('.tgz'));
  check(tarballs.length === 1, `npm pack left one tarball in ${dir} (found ${tarballs.join(', ') || 'none'})`);
  return join(dir, tarballs[0] ?? '');
}

/**
 * The files each node folder of a package (nodes/<type>/) ships beside its runtime: its spec, the
 * dialog, every help page of locales/, and the icons Node-RED takes from the runtime's folder.
 */
function nodeFolderFiles(root: string, pkg: PackageJson): string[] {
  return Object.values(pkg['node-red']?.nodes ?? {}).flatMap((js) => {
    const folder = dirname(js);
    const source = join(root, 'nodes', basename(folder));
    return [
      js,
      `${folder}/spec.js`,
      js.replace(/\.js$/, '.html'),
      ...walk(join(source, 'locales')).map((f) => `${folder}/locales/${f}`),
      ...walk(join(ROOT, 'icons')).map((f) => `${folder}/icons/${f}`),
    ];
  });
}

/** What the source says the package must hold, checked against the installed copy. */
function checkContents(installed: string, pkg: PackageJson): void {
  const files = new Set(walk(installed));
  const missing = (list: string[]): string[] => list.filter((f) => !files.has(f));
  const want: string[] = ['package.json', 'README.md', 'LICENSE', 'CHANGELOG.md', 'resources/rules.js'];
  want.push(...nodeFolderFiles(ROOT, pkg));
  for (const bin of Object.values(pkg.bin ?? {})) want.push(bin.replace(/^\.\//, ''));
  want.push(...walk(join(ROOT, 'resources')).map((f) => `resources/${f}`));
  want.push(...walk(join(ROOT, 'examples')).map((f) => `examples/${f}`));
  for (const js of Object.values(pkg['node-red']?.plugins ?? {})) want.push(js);
  const absent = missing([...new Set(want)]);
  check(absent.length === 0, `the package lacks ${absent.join(', ')} (package.json "files"?)`);

  const maps = [...files].filter((f) => f.endsWith('.map'));
  check(maps.length === 0, `the package ships source maps without their sources: ${maps.slice(0, 5).join(', ')}...`);
  const mapped = [...files].filter((f) => f.endsWith('.js') && readFileSync(join(installed, f), 'utf8').includes('//# sourceMappingURL='));
  check(mapped.length === 0, `shipped .js files point at source maps: ${mapped.slice(0, 5).join(', ')}`);
  const nodeTypes = [...files].filter((f) => f.startsWith('dist/nodes/') && f.endsWith('.d.ts'));
  check(nodeTypes.length === 0, `the package ships .d.ts of nodes: ${nodeTypes.slice(0, 5).join(', ')}`);
  const tests = [...files].filter((f) => /^dist\/(test|bench|scripts)\//.test(f));
  check(tests.length === 0, `the package ships development files: ${tests.slice(0, 5).join(', ')}`);
  const widgetFiles = [...files].filter((f) => /ipcam-ui-|ui-dashboard|ui-plate-row|\.umd\.js$/.test(f));
  check(widgetFiles.length === 0 && pkg['node-red-dashboard-2'] === undefined, `${PACKAGE} still holds widget files (they are ${WIDGETS}'s): ${widgetFiles.slice(0, 5).join(', ')}`);
  console.log(`pack-check: ${PACKAGE} contents: ${files.size} files; the nodes, their editors and help, resources/ (generated rules), examples, icons, LICENSE and CHANGELOG present; no widget files, no source maps, no node .d.ts`);
}

/** The widget package: its nodes, dialogs, help, icons, plugin and bundles; nothing but dist/nodes/ and resources/ (and package.json, README, LICENSE). */
function checkWidgetContents(installed: string, pkg: PackageJson, main: PackageJson): void {
  const files = new Set(walk(installed));
  check(pkg.dependencies?.[PACKAGE] === main.version, `${WIDGETS} depends on ${PACKAGE} at exactly its version ${main.version} (got ${JSON.stringify(pkg.dependencies)})`);
  check(pkg.version === main.version, `${WIDGETS} has the version of ${PACKAGE} (${pkg.version} against ${main.version})`);
  const want: string[] = ['package.json', 'README.md', 'LICENSE'];
  want.push(...nodeFolderFiles(WIDGETS_ROOT, pkg));
  for (const js of Object.values(pkg['node-red']?.plugins ?? {})) want.push(js);
  const bundles = widgetBundles(pkg).map((w) => `resources/${w.output}`);
  check(bundles.length === 2, `package.json "node-red-dashboard-2" names the two widgets' bundles (got ${bundles.join(', ') || 'none'})`);
  want.push(...bundles);
  const absent = [...new Set(want)].filter((f) => !files.has(f));
  check(absent.length === 0, `${WIDGETS} lacks ${absent.join(', ')} (package.json "files"?)`);
  const extra = [...files].filter((f) => !/^(dist\/nodes\/|resources\/)/.test(f) && !['package.json', 'README.md', 'LICENSE'].includes(f));
  check(extra.length === 0, `${WIDGETS} ships more than dist/nodes and resources: ${extra.slice(0, 5).join(', ')}`);
  const dev = [...files].filter((f) => f.endsWith('.map') || f.endsWith('.d.ts') || f.endsWith('.ts') || f.endsWith('.vue'));
  check(dev.length === 0, `${WIDGETS} ships sources, maps or .d.ts: ${dev.slice(0, 5).join(', ')}`);
  console.log(`pack-check: ${WIDGETS} contents: ${files.size} files; the two widget nodes, their editors and help, the dashboard plugin, resources/ (${bundles.map((b) => `${b.split('/').pop()} ${kib(statSync(join(installed, b)).size)}`).join(', ')}); depends on ${PACKAGE} ${main.version}`);
}

/** The Dashboard 2 widgets package.json declares: type, bundle file (in resources/), component. */
function widgetBundles(pkg: PackageJson): Array<{ type: string; output: string; component: string }> {
  return Object.entries(pkg['node-red-dashboard-2']?.widgets ?? {}).map(([type, w]) => ({ type, output: w.output, component: w.component }));
}

/**
 * Dashboard 2 of the lock file (the devDependency beside this project) linked into the user dir
 * and listed in its package.json, as the palette manager leaves an installed module: no network.
 * Its version.
 */
function installDashboard(userDir: string): string {
  const dir = dirname(require.resolve(`${DASHBOARD}/package.json`, { paths: [ROOT] }));
  const version = (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as PackageJson).version;
  mkdirSync(join(userDir, 'node_modules', dirname(DASHBOARD)), { recursive: true });
  symlinkSync(dir, join(userDir, 'node_modules', DASHBOARD), 'dir');
  const file = join(userDir, 'package.json');
  const project = JSON.parse(readFileSync(file, 'utf8')) as PackageJson;
  project.dependencies = { ...project.dependencies, [DASHBOARD]: `~${version}` };
  writeFileSync(file, JSON.stringify(project, null, 2));
  return version;
}

/** A tarball installed into the user dir (made fresh on the first call) as the palette manager does it. */
async function paletteInstall(userDir: string, tarball: string): Promise<number> {
  mkdirSync(userDir, { recursive: true });
  const project = join(userDir, 'package.json');
  if (!existsSync(project)) writeFileSync(project, JSON.stringify({ name: 'node-red-project', description: 'A Node-RED Project', version: '0.0.1', private: true }, null, 2));
  const started = process.hrtime.bigint();
  // The palette manager's command (@node-red/registry installer), with the tarball for the name.
  await run('npm', ['install', '--no-audit', '--no-update-notifier', '--no-fund', '--save', '--save-prefix=~', '--omit=dev', '--engine-strict', tarball], {
    cwd: userDir,
    maxBuffer: 16 * 1024 * 1024,
  });
  return Number(process.hrtime.bigint() - started) / 1e9;
}

/** The packed `ipcam-simulator` bin on a free port; its base URL and password. */
async function startSimulator(userDir: string, logFile: string): Promise<{ child: ChildProcess; url: string; password: string }> {
  const password = randomBytes(9).toString('base64url');
  const bin = join(userDir, 'node_modules', '.bin', 'ipcam-simulator');
  check(existsSync(bin), `the ipcam-simulator bin is installed (${bin})`);
  const child = spawn(bin, ['--port', '0', '--host', '127.0.0.1'], { cwd: userDir, env: { ...process.env, IPCAM_SIM_PASSWORD: password }, stdio: ['ignore', 'pipe', 'pipe'] });
  const log = createWriteStream(logFile);
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString('utf8');
    log.write(chunk);
  });
  child.stderr?.pipe(log);
  const url = await until(
    'the simulator prints its URL',
    async () => /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1],
    () => (child.exitCode !== null ? `it exited with ${child.exitCode}` : undefined),
  );
  return { child, url, password };
}

function settingsFile(userDir: string, uiPort: number, dashboard: boolean): string {
  const file = join(userDir, 'settings.js');
  const settings = {
    uiHost: '127.0.0.1',
    uiPort,
    flowFile: 'flows.json',
    credentialSecret: randomBytes(16).toString('hex'),
    telemetry: { enabled: false },
    diagnostics: { enabled: false },
    editorTheme: { tours: false },
    logging: { console: { level: 'info', metrics: false, audit: false } },
    // Node-RED also loads the modules of the node_modules it is installed in: the Node-RED beside
    // this project would find Dashboard 2 there (a devDependency). Without it means without it.
    ...(dashboard ? {} : { externalModules: { palette: { allowList: ['*'], denyList: [DASHBOARD] } } }),
  };
  writeFileSync(file, `module.exports = ${JSON.stringify(settings, null, 2)};\n`);
  return file;
}

/** The receiving end of the smoke flow: `POST /<kind>` with a JSON body. */
async function startCollector(): Promise<{ url: string; reports: Report[]; close(): Promise<void> }> {
  const reports: Report[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= 1024 * 1024) chunks.push(c);
    });
    req.on('end', () => {
      try {
        reports.push({ kind: (req.url ?? '/').slice(1), value: JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown });
      } catch {
        reports.push({ kind: (req.url ?? '/').slice(1), value: Buffer.concat(chunks).toString('utf8') });
      }
      res.end('ok');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    reports,
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}

/** A snapshot, a relay and a plate-event branch; each ends in a POST of what it got to the collector. */
function smokeFlow(simPort: number, eventPort: number, collector: string, password: string): FlowNode[] {
  const z = 'pc00000000000001';
  const report = (id: string, kind: string, next: string): FlowNode => ({
    id,
    type: 'function',
    z,
    name: `report ${kind}`,
    func: [
      'const p = msg.payload;',
      'const value = Buffer.isBuffer(p) ? { bytes: p.length, head: p.subarray(0, 3).toString("hex") } : p;',
      `const error = msg.error ? String(msg.error.message || msg.error) : undefined;`,
      `return { payload: { value, error }, url: ${JSON.stringify(`${collector}/${kind}`)}, headers: { "content-type": "application/json" } };`,
    ].join('\n'),
    outputs: 1,
    wires: [[next]],
  });
  const post = 'pc000000000000f0';
  return [
    ...widgetsWithoutDashboard(z),
    { id: z, type: 'tab', label: 'pack-check' },
    { id: 'pc00000000000002', type: 'ipcam-device', name: 'packed simulator', host: '127.0.0.1', port: String(simPort), protocol: 'http', auth: 'auto', tlsVerify: true, timeout: '10000', ca: '', credentials: { username: 'admin', password } },
    { id: 'pc00000000000003', type: 'ipcam-event-server', name: 'events', port: String(eventPort), bind: '127.0.0.1', path: '/', maxBody: '', maxConnections: '', allow: '' },
    { id: 'pc00000000000010', type: 'inject', z, name: 'snap', props: [{ p: 'payload' }], payload: '', payloadType: 'date', repeat: '', once: false, wires: [['pc00000000000011']] },
    // The snapshot goes to the camera widget too: without Dashboard 2 it takes the message and does nothing.
    { id: 'pc00000000000011', type: 'ipcam-snapshot', z, name: '', device: 'pc00000000000002', source: 'jpg', channel: '', format: 'buffer', wires: [['pc00000000000012', 'pc00000000000050']] },
    report('pc00000000000012', 'snapshot', post),
    { id: 'pc00000000000020', type: 'inject', z, name: 'relay on', props: [{ p: 'payload' }], payload: 'on', payloadType: 'str', repeat: '', once: false, wires: [['pc00000000000021']] },
    { id: 'pc00000000000021', type: 'ipcam-relay', z, name: '', device: 'pc00000000000002', output: '1', mode: 'on', pulse: '1000', sequence: '', wires: [['pc00000000000022']] },
    report('pc00000000000022', 'relay', post),
    { id: 'pc00000000000030', type: 'ipcam-plate-event', z, name: '', server: 'pc00000000000003', device: 'pc00000000000002', match: '', lists: [], dedup: '0', images: 'none', wires: [['pc00000000000031'], []] },
    report('pc00000000000031', 'plate', post),
    { id: 'pc00000000000040', type: 'catch', z, name: '', scope: null, uncaught: false, wires: [['pc00000000000041']] },
    report('pc00000000000041', 'error', post),
    { id: post, type: 'http request', z, name: 'to pack-check', method: 'POST', ret: 'txt', paytoqs: 'ignore', url: '', tls: '', persist: false, proxy: '', authType: '', senderr: false, headers: [], wires: [[]] },
  ];
}

/**
 * The two widgets where Dashboard 2 is not installed: the camera with no group (the editor has
 * none to offer then), the plates widget naming a group that is not there (a flow imported
 * without its dashboard nodes).
 */
function widgetsWithoutDashboard(z: string): FlowNode[] {
  return [
    { id: 'pc00000000000050', type: 'ipcam-ui-camera', z, group: '', order: 1, width: '6', height: '5', label: 'Gate', device: 'pc00000000000002', source: 'jpg', rate: '1', ptz: 'xml', presets: '', showPlates: false, wires: [[]] },
    { id: 'pc00000000000051', type: 'ipcam-ui-plates', z, group: 'pc00000000000099', order: 2, width: '6', height: '5', label: 'Last plates', count: '10', wires: [[]] },
  ];
}

/**
 * A Dashboard 2 page with both widgets on the packed simulator, the plates widget following an
 * event server of its own; any error of the flow goes to the collector.
 */
function dashboardFlow(simPort: number, eventPort: number, collector: string, password: string): FlowNode[] {
  const z = 'pd00000000000001';
  const post = 'pd000000000000f0';
  return [
    { id: z, type: 'tab', label: 'pack-check dashboard' },
    { id: 'pd00000000000002', type: 'ipcam-device', name: 'packed simulator', host: '127.0.0.1', port: String(simPort), protocol: 'http', auth: 'auto', tlsVerify: true, timeout: '10000', ca: '', heartbeat: '0', credentials: { username: 'admin', password } },
    { id: 'pd00000000000003', type: 'ui-base', name: 'ui', path: '/dashboard', includeClientData: true, acceptsClientConfig: ['ui-notification', 'ui-control'], showPathInSidebar: false, navigationStyle: 'default', titleBarStyle: 'default' },
    { id: 'pd00000000000004', type: 'ui-theme', name: 'theme', colors: { surface: '#ffffff', primary: '#0d74ce', bgPage: '#eeeeee', groupBg: '#ffffff', groupOutline: '#cccccc' }, sizes: { density: 'default', pagePadding: '12px', groupGap: '12px', groupBorderRadius: '4px', widgetGap: '12px' } },
    { id: 'pd00000000000005', type: 'ui-page', name: 'Gate', ui: 'pd00000000000003', path: '/gate', layout: 'grid', theme: 'pd00000000000004', order: 1, visible: 'true', disabled: 'false' },
    { id: 'pd00000000000006', type: 'ui-group', name: 'Gate', page: 'pd00000000000005', width: '12', height: '1', order: 1, showTitle: true, visible: 'true', disabled: 'false', groupType: 'default' },
    { id: 'pd00000000000050', type: 'ipcam-ui-camera', z, group: 'pd00000000000006', order: 1, width: '6', height: '5', label: 'Gate', device: 'pd00000000000002', source: 'jpg', rate: '2', ptz: 'xml', presets: '2', showPlates: true, wires: [[]] },
    { id: 'pd00000000000007', type: 'ipcam-event-server', name: 'events', port: String(eventPort), bind: '127.0.0.1', path: '/', maxBody: '', maxConnections: '', allow: '' },
    { id: 'pd00000000000051', type: 'ipcam-ui-plates', z, group: 'pd00000000000006', order: 2, width: '6', height: '5', label: 'Last plates', count: '10', server: 'pd00000000000007', wires: [[]] },
    { id: 'pd00000000000040', type: 'catch', z, name: '', scope: null, uncaught: false, wires: [['pd00000000000041']] },
    {
      id: 'pd00000000000041',
      type: 'function',
      z,
      name: 'report error',
      func: `return { payload: { error: String(msg.error && msg.error.message || msg.error) }, url: ${JSON.stringify(`${collector}/error`)}, headers: { "content-type": "application/json" } };`,
      outputs: 1,
      wires: [[post]],
    },
    { id: post, type: 'http request', z, name: 'to pack-check', method: 'POST', ret: 'txt', paytoqs: 'ignore', url: '', tls: '', persist: false, proxy: '', authType: '', senderr: false, headers: [], wires: [[]] },
  ];
}

async function api(base: string, path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${base}${path}`, { ...init, signal: AbortSignal.timeout(STEP_TIMEOUT_MS) });
}

async function json(res: Response, what: string): Promise<unknown> {
  check(res.ok, `${what}: HTTP ${res.status} ${await res.clone().text()}`);
  return res.json() as Promise<unknown>;
}

/**
 * Every node type and plugin of both packages registered with no error, each package loaded from
 * the user dir, and Dashboard 2 loaded (from the user dir) or not, as asked.
 */
async function checkRegistered(base: string, pkgs: PackageJson[], dashboard: boolean): Promise<void> {
  const sets = (await json(await api(base, '/nodes', { headers: { accept: 'application/json' } }), 'GET /nodes')) as NodeSet[];
  const allTypes = new Set(sets.flatMap((s) => s.types));
  const boards = sets.filter((s) => s.module === DASHBOARD);
  if (dashboard) {
    const boardErrors = boards.filter((s) => s.err !== undefined || !s.enabled);
    check(boards.length > 0 && boardErrors.length === 0 && allTypes.has('ui-group'), `Dashboard 2 registers with no error (${boardErrors.map((s) => `${s.id}: ${JSON.stringify(s.err ?? 'disabled')}`).join('; ') || `${boards.length} sets`})`);
    check(boards.every((s) => s.local === true), 'Dashboard 2 is loaded from the user dir');
  } else {
    check(boards.length === 0 && !allTypes.has('ui-group'), `Dashboard 2 is not loaded (found ${boards.map((s) => s.id).join(', ')})`);
  }
  const pluginSets = (await json(await api(base, '/plugins', { headers: { accept: 'application/json' } }), 'GET /plugins')) as PluginSet[];
  const said: string[] = [];
  for (const pkg of pkgs) {
    const ours = sets.filter((s) => s.module === pkg.name);
    const broken = ours.filter((s) => s.err !== undefined || !s.enabled);
    check(broken.length === 0, `${pkg.name}: node sets with an error: ${broken.map((s) => `${s.id}: ${JSON.stringify(s.err ?? 'disabled')}`).join('; ')}`);
    check(ours.every((s) => s.local === true), `${pkg.name} is loaded from the user dir (not from the node_modules Node-RED was started from)`);
    const types = new Set(ours.flatMap((s) => s.types));
    const expected = Object.keys(pkg['node-red']?.nodes ?? {});
    const absent = expected.filter((t) => !types.has(t));
    check(expected.length > 0 && absent.length === 0, `${pkg.name}: node types not registered: ${absent.join(', ') || '(package.json lists none)'}`);
    const versions = new Set(ours.map((s) => s.version));
    check(versions.size === 1 && versions.has(pkg.version), `${pkg.name}: the registered module is version ${pkg.version} (got ${[...versions].join(', ')})`);

    const plugins = pluginSets.filter((p) => p.module === pkg.name);
    const pluginErrors = plugins.filter((p) => p.err !== undefined || !p.enabled);
    check(pluginErrors.length === 0, `${pkg.name}: plugin sets with an error: ${pluginErrors.map((p) => `${p.id}: ${JSON.stringify(p.err ?? 'disabled')}`).join('; ')}`);
    const pluginIds = new Set(plugins.flatMap((p) => (p.plugins ?? []).map((q) => q.id)));
    const pluginsExpected = Object.keys(pkg['node-red']?.plugins ?? {});
    const pluginsAbsent = pluginsExpected.filter((id) => !pluginIds.has(id));
    check(pluginsAbsent.length === 0, `${pkg.name}: plugins not registered: ${pluginsAbsent.join(', ')}`);
    said.push(`${pkg.name}: ${expected.length} node types${pluginsExpected.length ? ` and the ${pluginsExpected.join(', ')} plugin` : ''}`);
  }
  console.log(`pack-check: registered from the user dir, no errors: ${said.join('; ')}; Dashboard 2 ${dashboard ? `loaded (${boards.length} node sets)` : 'absent'}`);
}

/** The editor side: each type's dialog and help, the files its <script src> loads, the icons, the examples. */
async function checkEditor(base: string, pkgs: PackageJson[]): Promise<void> {
  const expected = pkgs.flatMap((pkg) => Object.keys(pkg['node-red']?.nodes ?? {}));
  const html = await (await api(base, '/nodes', { headers: { accept: 'text/html' } })).text();
  for (const type of expected) {
    check(html.includes(`data-template-name="${type}"`), `the editor template of ${type} is served`);
    check(html.includes(`data-help-name="${type}"`), `the help of ${type} is served (locales/)`);
  }
  // The help is served as the build composed it: the shared parts in, no placeholder left.
  check(!html.includes('<!-- IPCAM-HELP') && !html.includes('<!-- OPERATIONS'), 'the served help still holds a placeholder of scripts/build.js');
  const deviceEntry = readFileSync(join(ROOT, 'docs', 'help', 'msg-device.html'), 'utf8').trim();
  check(html.split(deviceEntry).length - 1 >= 11, 'the served help of every action node holds the msg.device entry (docs/help/msg-device.html)');
  const scripts = [...new Set([...html.matchAll(/src="(resources\/node-red-contrib-ipcam\/[^"]+)"/g)].map((m) => m[1] ?? ''))];
  check(scripts.includes('resources/node-red-contrib-ipcam/rules.js'), 'an editor loads the generated resources/rules.js');
  for (const src of scripts) {
    const res = await api(base, `/${src}`);
    check(res.ok && (await res.text()).length > 0, `GET /${src}: HTTP ${res.status}`);
  }
  const icons = (await json(await api(base, '/icons'), 'GET /icons')) as Record<string, string[]>;
  const iconsAbsent = pkgs.flatMap((pkg) => walk(join(ROOT, 'icons')).filter((f) => !(icons[pkg.name] ?? []).includes(f)).map((f) => `${pkg.name}/${f}`));
  check(iconsAbsent.length === 0, `icons not served: ${iconsAbsent.join(', ')}`);
  const examples = walk(join(ROOT, 'examples')).filter((f) => f.endsWith('.json'));
  for (const file of examples) {
    const name = file.replace(/\.json$/, '');
    const res = await api(base, `/library/examples/flows/${PACKAGE}/${name}`);
    check(res.ok, `example ${name} is offered (GET /library/examples/...: HTTP ${res.status})`);
    check(JSON.stringify(await res.json()) === JSON.stringify(JSON.parse(readFileSync(join(ROOT, 'examples', file), 'utf8'))), `example ${name} is the one in examples/`);
  }
  console.log(`pack-check: editor files served: ${scripts.length} resources (${scripts.map((s) => s.split('/').pop()).join(', ')}), ${expected.length} help texts, ${iconsAbsent.length === 0 ? 'icons' : ''}, ${examples.length} examples`);
}

async function deploy(base: string, flow: FlowNode[]): Promise<void> {
  const deployed = await api(base, '/flows', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'node-red-deployment-type': 'full' },
    body: JSON.stringify(flow),
  });
  check(deployed.ok, `deploy (POST /flows): HTTP ${deployed.status} ${await deployed.text()}`);
}

async function smoke(base: string, sim: { url: string; password: string }, collector: { url: string; reports: Report[] }): Promise<void> {
  const simPort = Number(new URL(sim.url).port);
  const eventPort = await freePort();
  await deploy(base, smokeFlow(simPort, eventPort, collector.url, sim.password));
  await until('the event server listens', () => canConnect(eventPort));

  const got = async (kind: string): Promise<Report> => {
    const report = await until(`a ${kind} message`, async () => {
      const error = collector.reports.find((r) => r.kind === 'error');
      if (error) fail(`the flow caught an error: ${JSON.stringify(error.value)}`);
      return collector.reports.find((r) => r.kind === kind);
    });
    return report;
  };
  const inject = async (id: string): Promise<void> => {
    const res = await api(base, `/inject/${id}`, { method: 'POST' });
    check(res.ok, `POST /inject/${id}: HTTP ${res.status}`);
  };

  await inject('pc00000000000010');
  const snapshot = (await got('snapshot')).value as { value?: { bytes?: number; head?: string } };
  check((snapshot.value?.bytes ?? 0) > 100 && snapshot.value?.head === 'ffd8ff', `the snapshot is a JPEG (got ${JSON.stringify(snapshot)})`);

  await inject('pc00000000000020');
  const relay = (await got('relay')).value as { value?: { output?: unknown; active?: unknown } };
  check(relay.value?.active === true, `the relay message says active (got ${JSON.stringify(relay)})`);
  const io = (await json(await api(sim.url, '/_sim/io'), 'GET /_sim/io')) as { outputs?: Record<string, boolean> };
  check(io.outputs?.['1'] === true, `the simulator's relay 1 is on (got ${JSON.stringify(io.outputs)})`);

  const plate = 'PACK123';
  const posted = await api(sim.url, '/_sim/events', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ url: `http://127.0.0.1:${eventPort}/`, kind: 'plate', format: 'ipc', plate, listType: 'whiteList' }),
  });
  check(posted.ok, `the simulator posts a plate event: HTTP ${posted.status} ${await posted.text()}`);
  const event = (await got('plate')).value as { value?: { plate?: unknown; listType?: unknown } };
  check(event.value?.plate === plate, `the plate event carries ${plate} (got ${JSON.stringify(event)})`);
  console.log(`pack-check: smoke flow: snapshot ${snapshot.value?.bytes} bytes JPEG, relay 1 switched on, plate event ${plate} (${String(event.value?.listType)})`);
}

/**
 * Without Dashboard 2: each widget warned once, on deploy, that it needs it (a status set as a node
 * starts reaches no status node, and the admin API has none: the log is where it shows). The
 * warnings; checkLog takes them as expected.
 */
function checkWidgetsWithoutDashboard(logFile: string): string[] {
  const lines = readFileSync(logFile, 'utf8').split('\n');
  const warned: string[] = [];
  for (const [id, type] of [
    ['pc00000000000050', 'ipcam-ui-camera'],
    ['pc00000000000051', 'ipcam-ui-plates'],
  ] as const) {
    const mine = lines.filter((l) => l.includes(`[${type}:${id}]`));
    check(mine.length === 1 && mine[0]?.includes('[warn]') && mine[0].includes('needs Dashboard 2'), `${type} without Dashboard 2 warns once that it needs it (its log lines: ${mine.join(' | ') || 'none'})`);
    warned.push(mine[0] ?? '');
  }
  console.log(`pack-check: without Dashboard 2: both widgets warn once that they need it ("${warned[0]?.replace(/^.*\] /, '')}"); the runtime and the rest of the flow unaffected`);
  return warned;
}

/**
 * A Dashboard 2 client as far as this check needs one: Socket.IO over HTTP long-polling (Engine.IO
 * 4), with no dependency and no Origin header (Dashboard 2 turns cross-origin clients away).
 */
class DashboardClient {
  /** Every event received, as its arguments: `[name, ...args]`. */
  readonly events: unknown[][] = [];

  private constructor(
    private readonly url: string,
    private readonly sid: string,
  ) {}

  static async open(base: string, path: string): Promise<DashboardClient> {
    const url = `${base}${path}/socket.io/?EIO=4&transport=polling`;
    const open = await DashboardClient.http('GET', url);
    const sid = (JSON.parse(open.replace(/^0/, '')) as { sid?: string }).sid;
    check(typeof sid === 'string', `Dashboard 2's socket opens (got ${open.slice(0, 200)})`);
    const client = new DashboardClient(url, sid ?? '');
    await client.post('40');
    return client;
  }

  private static http(method: 'GET' | 'POST', url: string, body?: string): Promise<string> {
    return new Promise((done, failed) => {
      const req = request(url, { method, timeout: STEP_TIMEOUT_MS, headers: body === undefined ? {} : { 'content-type': 'text/plain;charset=UTF-8' } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => (res.statusCode === 200 ? done(Buffer.concat(chunks).toString('utf8')) : failed(new CheckFailed(`${method} ${url}: HTTP ${res.statusCode}`))));
        res.on('error', failed);
      });
      req.on('timeout', () => req.destroy(new CheckFailed(`${method} ${url}: no answer`)));
      req.on('error', failed);
      req.end(body);
    });
  }

  private post(packet: string): Promise<string> {
    return DashboardClient.http('POST', `${this.url}&sid=${this.sid}`, packet);
  }

  /** Polls until `pick` finds what it wants among the events received. */
  async until<T>(what: string, pick: (events: unknown[][]) => T | undefined): Promise<T> {
    const deadline = Date.now() + STEP_TIMEOUT_MS;
    for (;;) {
      const found = pick(this.events);
      if (found !== undefined) return found;
      if (Date.now() > deadline) fail(`${what}: nothing within ${STEP_TIMEOUT_MS / 1000} s`);
      for (const packet of (await DashboardClient.http('GET', `${this.url}&sid=${this.sid}`)).split('\x1e')) {
        if (packet === '2') await this.post('3');
        else if (packet === '1' || packet.startsWith('41') || packet.startsWith('44')) fail(`${what}: Dashboard 2 closed the socket (${packet.slice(0, 200)})`);
        else if (packet.startsWith('42')) this.events.push(JSON.parse(packet.slice(2)) as unknown[]);
      }
    }
  }

  async close(): Promise<void> {
    await this.post('1').catch(() => undefined);
  }
}

/**
 * With Dashboard 2: both widgets are in the configuration a dashboard client gets, naming their
 * bundle in the widget package as Dashboard 2 found it (from the user dir's package.json, as for
 * any third-party widget); the bundle is served where Dashboard 2's client imports a third-party
 * widget from (`<httpAdminRoot>/resources/<package>/<src>`) and is the packed file.
 */
async function checkDashboard(base: string, installed: string, pkg: PackageJson): Promise<void> {
  // The deploy answers before the flow's ui-base has attached its socket to the server.
  const client = await until("Dashboard 2's socket opens", () => DashboardClient.open(base, '/dashboard'));
  try {
    const config = await client.until('the dashboard configuration (ui-config)', (events) => events.find((e) => e[0] === 'ui-config')?.[2]);
    const widgets = (config as { widgets?: Record<string, { type?: string; src?: { package?: string; src?: string; component?: string } }> }).widgets ?? {};
    const served: string[] = [];
    for (const { type, output, component } of widgetBundles(pkg)) {
      const widget = Object.values(widgets).find((w) => w.type === type);
      check(widget, `${type} is on the dashboard (ui-config has ${Object.values(widgets).map((w) => w.type).join(', ') || 'no widgets'})`);
      const src = widget?.src;
      check(src?.package === WIDGETS && src.src === output && src.component === component, `${type} names its bundle ${WIDGETS}/${output} (${component}) to the client (got ${JSON.stringify(src)})`);
      const res = await api(base, `/resources/${src?.package ?? ''}/${src?.src ?? ''}`);
      check(res.ok, `GET /resources/${WIDGETS}/${output} (Dashboard 2 loads the widget from there): HTTP ${res.status}`);
      const body = Buffer.from(await res.arrayBuffer());
      check(body.equals(readFileSync(join(installed, 'resources', output))), `the served ${output} is the packed one`);
      check(body.includes(component), `${output} defines ${component}`);
      served.push(`${output} ${kib(body.length)}`);
    }
    console.log(`pack-check: with Dashboard 2: both widgets in the dashboard's configuration, found by Dashboard 2 in ${WIDGETS}; bundles served at /resources/${WIDGETS}/ (${served.join(', ')})`);
  } finally {
    await client.close();
  }
}

/**
 * The dashboard page in Chromium: the camera widget shows a JPEG frame of the packed simulator,
 * and the plates widget its table, with the plate the simulator then posts to the page's event
 * server. No request leaves this machine; an error in the page fails the check.
 */
async function checkRendered(base: string, sim: { url: string }, eventPort: number, collector: { reports: Report[] }): Promise<void> {
  const t = process.hrtime.bigint();
  const browser = await launchBrowser();
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const origin = new URL(base).origin;
    await page.route((url) => url.origin !== origin && url.protocol !== 'data:', (route) => route.abort('blockedbyclient'));
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    const rendered = async <T>(what: string, probe: () => Promise<T>): Promise<T> => {
      try {
        return await probe();
      } catch (err) {
        const caught = collector.reports.find((r) => r.kind === 'error');
        return fail(`${what}: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}${errors.length ? `; page errors: ${errors.join(' | ')}` : ''}${caught ? `; the flow caught: ${JSON.stringify(caught.value)}` : ''}`);
      }
    };
    await page.goto(`${base}/dashboard/gate`);
    const image = page.locator('img.ipcam-ui-camera-image');
    await rendered('the camera widget shows a frame', () => image.waitFor({ state: 'visible', timeout: STEP_TIMEOUT_MS }));
    const frame = await rendered('the frame loads', () =>
      image.evaluate(
        (el) =>
          new Promise<{ src: string; width: number }>((done, failed) => {
            const img = el as unknown as { complete: boolean; naturalWidth: number; src: string; addEventListener(type: string, cb: () => void): void };
            const result = (): void => done({ src: img.src.slice(0, 40), width: img.naturalWidth });
            if (img.complete && img.naturalWidth > 0) return result();
            img.addEventListener('load', result);
            img.addEventListener('error', () => failed(new Error('the frame did not load')));
          }),
      ),
    );
    check(frame.src.startsWith('data:image/jpeg;base64,/9j/') && frame.width > 0, `the camera widget shows a JPEG (got ${JSON.stringify(frame)})`);
    await rendered('the plates widget shows its table', () => page.locator('.ipcam-ui-plates table').waitFor({ state: 'visible', timeout: STEP_TIMEOUT_MS }));
    const plate = 'PACK456';
    const posted = await api(sim.url, '/_sim/events', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: `http://127.0.0.1:${eventPort}/`, kind: 'plate', format: 'ipc', plate, listType: 'whiteList' }),
    });
    check(posted.ok, `the simulator posts a plate event: HTTP ${posted.status} ${await posted.text()}`);
    await rendered(`the plates widget shows the posted ${plate}`, () => page.locator('.ipcam-ui-plates-row', { hasText: plate }).waitFor({ state: 'visible', timeout: STEP_TIMEOUT_MS }));
    check(errors.length === 0, `the dashboard page had errors: ${errors.join(' | ')}`);
    console.log(`pack-check: Chromium rendered /dashboard/gate in ${seconds(t)}: the camera widget a ${frame.width} px wide JPEG frame of the packed simulator, the plates widget its table with ${plate}`);
  } finally {
    await browser.close();
  }
}

async function stopChild(child: ChildProcess | undefined, signal: NodeJS.Signals): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill(signal);
  const forced = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(forced);
}

function tail(file: string, lines = 40): string {
  if (!existsSync(file)) return '';
  return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
}

/** Node-RED on the user dir, with or without Dashboard 2; up when it answers GET /settings. */
async function startNodeRed(nodeRed: string, version: string, userDir: string, dashboard: boolean, logFile: string): Promise<{ child: ChildProcess; base: string }> {
  const t = process.hrtime.bigint();
  const uiPort = await freePort();
  const base = `http://127.0.0.1:${uiPort}`;
  const settings = settingsFile(userDir, uiPort, dashboard);
  const log = createWriteStream(logFile);
  const child = spawn(process.execPath, [join(nodeRed, 'red.js'), '--userDir', userDir, '--settings', settings], { cwd: userDir, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  const info = await until(
    'Node-RED answers GET /settings',
    async () => {
      const res = await fetch(`${base}/settings`);
      return res.ok ? ((await res.json()) as { version?: string }) : undefined;
    },
    () => (child.exitCode !== null ? `Node-RED exited with ${child.exitCode}` : undefined),
  ).catch((err: unknown) => {
    child.kill('SIGKILL');
    throw err;
  });
  console.log(`pack-check: Node-RED ${String(info.version)} ${dashboard ? 'with' : 'without'} Dashboard 2 up in ${seconds(t)}`);
  check(String(info.version).replace(/-git$/, '') === version, `the running Node-RED is ${version} (it says ${String(info.version)})`);
  return { child, base };
}

/** Node-RED's own start-up warnings (projects, a fresh credentials file) are not ours. */
function checkLog(logFile: string, expected: string[] = []): void {
  const errors = readFileSync(logFile, 'utf8')
    .split('\n')
    .filter((l) => !expected.includes(l))
    .filter((l) => l.includes('[error]') || (l.includes('[warn]') && l.includes('ipcam')));
  check(errors.length === 0, `Node-RED logged errors, or warnings of ours:\n${errors.join('\n')}`);
}

async function main(): Promise<void> {
  const options = args();
  const work = mkdtempSync(join(tmpdir(), 'pack-check-'));
  const userDir = join(work, 'user');
  const redLogs = [join(work, 'node-red.log'), join(work, 'node-red-dashboard.log')] as const;
  const simLog = join(work, 'simulator.log');
  let red: ChildProcess | undefined;
  let redLog: string = redLogs[0];
  let sim: ChildProcess | undefined;
  let collector: Awaited<ReturnType<typeof startCollector>> | undefined;
  let ok = false;
  const total = process.hrtime.bigint();
  try {
    const redPkg = JSON.parse(readFileSync(join(options.nodeRed, 'package.json'), 'utf8')) as PackageJson;
    check(redPkg.name === 'node-red', `${options.nodeRed} is Node-RED`);
    console.log(`pack-check: Node ${process.version}, Node-RED ${redPkg.version} (${options.nodeRed})`);
    if (options.expectNodeRed) check(`${redPkg.version}.`.startsWith(`${options.expectNodeRed}.`), `Node-RED ${redPkg.version} is ${options.expectNodeRed}.x`);

    // Both packages packed, then installed one after the other as a user does it from the palette:
    // the widgets' dependency on the main package is then met by the installed one, offline.
    const pkgs: PackageJson[] = [];
    const installedDirs: string[] = [];
    for (const [name, workspace] of [[PACKAGE, undefined], [WIDGETS, WIDGETS]] as const) {
      const t = process.hrtime.bigint();
      const tarball = await pack(join(work, name), workspace);
      const packed = statSync(tarball).size;
      console.log(`pack-check: npm pack ${name} (release build) ${seconds(t)}: ${tarball.split('/').pop()} ${kib(packed)}`);
      const installSeconds = await paletteInstall(userDir, tarball);
      const installed = join(userDir, 'node_modules', name);
      const pkg = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as PackageJson;
      check(pkg.name === name, `the tarball installed ${name} (got ${pkg.name})`);
      const unpacked = walk(installed).reduce((sum, f) => sum + statSync(join(installed, f)).size, 0);
      console.log(`pack-check: palette install of ${name} (--omit=dev --engine-strict) into the user dir: ${installSeconds.toFixed(1)} s; ${kib(packed)} packed, ${kib(unpacked)} unpacked`);
      pkgs.push(pkg);
      installedDirs.push(installed);
    }
    const [pkg, widgetPkg] = pkgs as [PackageJson, PackageJson];
    const widgetsInstalled = installedDirs[1] ?? '';
    checkContents(installedDirs[0] ?? '', pkg);
    checkWidgetContents(widgetsInstalled, widgetPkg, pkg);
    // One copy of the main package, which the widgets load their lib/ from (no second one nested in theirs).
    check(!existsSync(join(widgetsInstalled, 'node_modules', PACKAGE)), `${WIDGETS} got a copy of ${PACKAGE} of its own (node_modules/${WIDGETS}/node_modules/${PACKAGE})`);

    const simulator = await startSimulator(userDir, simLog);
    sim = simulator.child;
    collector = await startCollector();

    // Without Dashboard 2: everything registers, the smoke flow runs beside the two widgets, which say what they need.
    let started = await startNodeRed(options.nodeRed, redPkg.version, userDir, false, redLog);
    red = started.child;
    await checkRegistered(started.base, pkgs, false);
    await checkEditor(started.base, pkgs);
    await smoke(started.base, simulator, collector);
    checkLog(redLog, checkWidgetsWithoutDashboard(redLog));
    await stopChild(red, 'SIGINT');

    // With Dashboard 2 (the lock file's, linked in): the widgets on a page, their bundles served, rendered in Chromium.
    const t = process.hrtime.bigint();
    for (const file of ['flows.json', 'flows_cred.json']) rmSync(join(userDir, file), { force: true });
    const dashboardVersion = installDashboard(userDir);
    console.log(`pack-check: ${DASHBOARD} ${dashboardVersion} (the lock file's) linked into the user dir`);
    redLog = redLogs[1];
    started = await startNodeRed(options.nodeRed, redPkg.version, userDir, true, redLog);
    red = started.child;
    await checkRegistered(started.base, pkgs, true);
    const eventPort = await freePort();
    await deploy(started.base, dashboardFlow(Number(new URL(simulator.url).port), eventPort, collector.url, simulator.password));
    await until('the dashboard event server listens', () => canConnect(eventPort));
    await checkDashboard(started.base, widgetsInstalled, widgetPkg);
    await checkRendered(started.base, simulator, eventPort, collector);
    checkLog(redLog);
    console.log(`pack-check: the Dashboard 2 leg took ${seconds(t)}`);
    ok = true;
    console.log(`pack-check: passed in ${seconds(total)}`);
  } finally {
    await stopChild(red, 'SIGINT');
    await stopChild(sim, 'SIGTERM');
    await collector?.close();
    if (!ok) {
      console.error(`pack-check: Node-RED log (last lines, ${redLog}):\n${tail(redLog)}\npack-check: simulator log:\n${tail(simLog, 10)}`);
    }
    if (options.keep || !ok) console.error(`pack-check: work dir kept: ${work}`);
    else rmSync(work, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(`pack-check: FAILED: ${err instanceof CheckFailed ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exit(1);
});
