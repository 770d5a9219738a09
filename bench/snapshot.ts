/**
 * Snapshot overhead: GET /jpg/image.jpg (8.6 KB JPEG) from a simulated device in ANOTHER process,
 * sequential on one keep-alive connection. For each way of asking, the wall time and the CPU
 * time of this (client) process per snapshot; ours (DeviceClient + takeSnapshot) against the
 * bare library it is built on (an undici Pool with the same keep-alive and the same
 * Authorization header) and against node:http (a keep-alive Agent), each reading the whole body
 * into one Buffer and checking the status. Rounds interleave the cases (the order rotates);
 * ratios are taken per round against the bare undici case of the same round.
 */
import { Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { takeSnapshot } from '../lib/ops/snapshot';
import { parseChallenges } from '../lib/transport/challenge';
import { DeviceClient } from '../lib/transport/client';
import { digestResponse, formatNonceCount } from '../lib/transport/digest';
import { PASSWORD, USER } from './measure';
import { formatSpread, spreadOf, startSimulatorProcess, type Spread } from './sim-process';

const PATH = '/jpg/image.jpg';
const ROUNDS = 15;
const PER_ROUND = 300;
const WARMUP = 200;
/** DeviceClient's pool (lib/transport/options default connections, client.ts keep-alive). */
const CONNECTIONS = 4;
const KEEP_ALIVE_MS = 30_000;

type Headers = Record<string, string>;
type Get = (headers: Headers) => Promise<Buffer>;

interface Case {
  name: string;
  call: () => Promise<unknown>;
  /** Per round: microseconds per snapshot. */
  wall: number[];
  cpu: number[];
}

function undiciGet(pool: Pool): Get {
  return async (headers) => {
    const res = await pool.request({ method: 'GET', path: PATH, headers });
    const body = Buffer.from(await res.body.arrayBuffer());
    if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}`);
    return body;
  };
}

function nodeHttpGet(origin: URL, agent: Agent): Get & { raw(headers: Headers): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> } {
  const raw = (headers: Headers): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> =>
    new Promise((resolve, reject) => {
      const req = httpRequest({ host: origin.hostname, port: origin.port, path: PATH, agent, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks) }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    });
  const get = async (headers: Headers): Promise<Buffer> => {
    const res = await raw(headers);
    if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
    return res.body;
  };
  return Object.assign(get, { raw });
}

/** The least a digest client does: one challenge, then a header per request with nc + 1. */
function inlineDigest(wwwAuthenticate: string | string[] | undefined): () => Headers {
  const challenge = parseChallenges(wwwAuthenticate).find((c) => c.scheme === 'digest' && (c.params['algorithm'] ?? '').toUpperCase() === 'SHA-256');
  if (!challenge) throw new Error('the simulator offered no SHA-256 digest challenge');
  const { realm = '', nonce = '', opaque = '' } = challenge.params;
  let nc = 0;
  return () => {
    nc += 1;
    const ncText = formatNonceCount(nc);
    const cnonce = 'bench';
    const response = digestResponse({ algorithm: 'SHA-256', username: USER, password: PASSWORD, realm, nonce, method: 'GET', uri: PATH, qop: 'auth', nc: ncText, cnonce });
    return {
      authorization: `Digest username="${USER}", realm="${realm}", nonce="${nonce}", uri="${PATH}", algorithm=SHA-256, response="${response}", opaque="${opaque}", qop=auth, nc=${ncText}, cnonce="${cnonce}"`,
    };
  };
}

async function timeRound(c: Case): Promise<void> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < PER_ROUND; i++) await c.call();
  const wall = ((performance.now() - t0) * 1000) / PER_ROUND;
  const cpu = process.cpuUsage(cpu0);
  c.wall.push(wall);
  c.cpu.push((cpu.user + cpu.system) / PER_ROUND);
}

function ratios(of: number[], to: number[]): Spread {
  return spreadOf(of.map((v, i) => v / (to[i] as number)));
}

function printGroup(title: string, cases: Case[]): void {
  const base = cases[0] as Case;
  console.log(title);
  console.table(
    cases.map((c) => ({
      case: c.name,
      'wall us/snapshot': formatSpread(spreadOf(c.wall), 0),
      'x undici wall': formatSpread(ratios(c.wall, base.wall), 2),
      'client CPU us/snapshot': formatSpread(spreadOf(c.cpu), 0),
      'x undici CPU': formatSpread(ratios(c.cpu, base.cpu), 2),
    })),
  );
}

async function requestCount(url: string): Promise<number> {
  const res = await fetch(`${url}/_sim/state`);
  return ((await res.json()) as { requestCount: number }).requestCount;
}

export async function snapshotRoundTrip(): Promise<void> {
  console.log(`\n## Snapshot overhead (GET ${PATH}, 8.6 KB JPEG, keep-alive, sequential; the device in another process)`);
  const sim = await startSimulatorProcess(1);
  const url = sim.urls[0] as string;
  const origin = new URL(url);
  const port = Number(origin.port);
  const pools: Pool[] = [];
  const agents: Agent[] = [];
  const clients: DeviceClient[] = [];
  const pool = (): Pool => {
    const p = new Pool(url, { connections: CONNECTIONS, keepAliveTimeout: KEEP_ALIVE_MS });
    pools.push(p);
    return p;
  };
  const agent = (): Agent => {
    const a = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
    agents.push(a);
    return a;
  };
  const client = (auth: 'basic' | 'auto'): DeviceClient => {
    const c = new DeviceClient({ host: origin.hostname, port, username: USER, password: PASSWORD, auth });
    clients.push(c);
    return c;
  };
  try {
    const basic = { authorization: 'Basic ' + Buffer.from(`${USER}:${PASSWORD}`).toString('base64') };
    const undiciBasic = undiciGet(pool());
    const httpBasic = nodeHttpGet(origin, agent());
    const oursBasic = client('basic');
    // Digest: each baseline answers the challenge once, as DeviceClient does.
    const undiciDigestPool = pool();
    const challenge = await undiciDigestPool.request({ method: 'GET', path: PATH });
    await challenge.body.dump();
    const undiciDigestHeader = inlineDigest(challenge.headers['www-authenticate']);
    const undiciDigest = undiciGet(undiciDigestPool);
    const httpDigest = nodeHttpGet(origin, agent());
    const httpDigestHeader = inlineDigest((await httpDigest.raw({})).headers['www-authenticate']);
    const oursDigest = client('auto');

    const group = (...cases: Array<[string, () => Promise<unknown>]>): Case[] => cases.map(([name, call]) => ({ name, call, wall: [], cpu: [] }));
    const basicCases = group(
      ['bare undici Pool.request, Basic header', () => undiciBasic(basic)],
      ['node:http keep-alive Agent, Basic header', () => httpBasic(basic)],
      ['takeSnapshot (DeviceClient, auth basic)', () => takeSnapshot(oursBasic)],
    );
    const digestCases = group(
      ['bare undici + inline Digest SHA-256 header', () => undiciDigest(undiciDigestHeader())],
      ['node:http + inline Digest SHA-256 header', () => httpDigest(httpDigestHeader())],
      ['takeSnapshot (DeviceClient, auth auto -> Digest SHA-256)', () => takeSnapshot(oursDigest)],
    );
    const all = [...basicCases, ...digestCases];
    for (const c of all) for (let i = 0; i < WARMUP; i++) await c.call();
    const started = performance.now();
    for (let round = 0; round < ROUNDS; round++) {
      // The order rotates, so that no case always runs first or after the same neighbour.
      for (let k = 0; k < all.length; k++) await timeRound(all[(k + round) % all.length] as Case);
    }
    console.log(`${ROUNDS} rounds x ${PER_ROUND} snapshots per case, median [min..max] over rounds; ratios per round against bare undici (${((performance.now() - started) / 1000).toFixed(0)} s)`);
    printGroup('Basic:', basicCases);
    printGroup('Digest:', digestCases);

    // Round trips per digest snapshot once the nonce is known.
    const n = 500;
    const before = await requestCount(url);
    for (let i = 0; i < n; i++) await takeSnapshot(oursDigest);
    const warm = (await requestCount(url)) - before;
    const fresh = client('auto');
    const beforeFresh = await requestCount(url);
    for (let i = 0; i < n; i++) await takeSnapshot(fresh);
    const cold = (await requestCount(url)) - beforeFresh;
    console.log(`Digest: ${n} snapshots on a warm client reached the device as ${warm} requests (${(warm / n).toFixed(3)} per snapshot)`);
    console.log(`Digest: ${n} snapshots on a new client: ${cold} requests (one 401 challenge, then ${((cold - 1) / n).toFixed(3)} per snapshot)`);
  } finally {
    await Promise.all([...pools.map((p) => p.close()), ...clients.map((c) => c.close())]);
    for (const a of agents) a.destroy();
    await sim.stop();
  }
}
