import { Pool } from 'undici';
import { takeSnapshot } from '../lib/cgi/snapshot';
import type { Simulator } from '../lib/simulator';
import { DeviceClient } from '../lib/transport/client';
import { parseChallenges } from '../lib/transport/challenge';
import { digestResponse, formatNonceCount } from '../lib/transport/digest';
import { PASSWORD, report, timeRounds, USER, type Timing } from './measure';

export async function snapshotRoundTrip(sim: Simulator): Promise<void> {
  console.log('\n## Snapshot round trip (GET /jpg/image.jpg, 8.6 KB JPEG, keep-alive, sequential)');
  const basicHeader = 'Basic ' + Buffer.from(`${USER}:${PASSWORD}`).toString('base64');
  const bare = new Pool(sim.url, { connections: 4 });
  const bareCall = async (): Promise<void> => {
    const res = await bare.request({ method: 'GET', path: '/jpg/image.jpg', headers: { authorization: basicHeader } });
    await res.body.arrayBuffer();
  };
  const bareDigestCall = await bareDigest(bare);
  const basicClient = new DeviceClient({ host: sim.host, port: sim.port, username: USER, password: PASSWORD, auth: 'basic' });
  const digestClient = new DeviceClient({ host: sim.host, port: sim.port, username: USER, password: PASSWORD, auth: 'auto' });

  // Interleave so that drift of the machine hits both sides alike; keep the last pass.
  let baseline: Timing | undefined;
  let ours: Timing | undefined;
  let bareDigestTiming: Timing | undefined;
  let oursDigest: Timing | undefined;
  for (let pass = 0; pass < 2; pass++) {
    baseline = await timeRounds('bare undici Pool.request (Basic header)', bareCall);
    ours = await timeRounds('takeSnapshot, auth basic', () => takeSnapshot(basicClient));
    bareDigestTiming = await timeRounds('bare undici + inline Digest SHA-256 header', bareDigestCall);
    oursDigest = await timeRounds('takeSnapshot, auth auto -> Digest SHA-256', () => takeSnapshot(digestClient));
  }
  report(baseline as Timing, ours as Timing);
  report(bareDigestTiming as Timing, oursDigest as Timing);

  // Round trips per digest request once the nonce is known.
  sim.resetRequests();
  const n = 500;
  for (let i = 0; i < n; i++) await takeSnapshot(digestClient);
  const fresh = new DeviceClient({ host: sim.host, port: sim.port, username: USER, password: PASSWORD, auth: 'auto' });
  const before = sim.state.requestCount;
  for (let i = 0; i < n; i++) await takeSnapshot(fresh);
  const freshRequests = sim.state.requestCount - before;
  console.log(`Digest: ${n} snapshots on a warm client reached the device as ${sim.state.requestCount - freshRequests} requests ` + `(${((sim.state.requestCount - freshRequests) / n).toFixed(3)} per snapshot)`);
  console.log(`Digest: ${n} snapshots on a new client: ${freshRequests} requests (one 401 challenge, then ${((freshRequests - 1) / n).toFixed(3)} per snapshot)`);

  await Promise.all([bare.close(), basicClient.close(), digestClient.close(), fresh.close()]);
}

/** The least a digest client can do: one challenge, then a header per request with nc + 1. */
async function bareDigest(pool: Pool): Promise<() => Promise<void>> {
  const first = await pool.request({ method: 'GET', path: '/jpg/image.jpg' });
  await first.body.dump();
  const challenge = parseChallenges(first.headers['www-authenticate']).find((c) => c.scheme === 'digest');
  if (!challenge) throw new Error('simulator offered no digest challenge');
  const { realm = '', nonce = '', opaque = '' } = challenge.params;
  let nc = 0;
  return async () => {
    nc += 1;
    const ncText = formatNonceCount(nc);
    const cnonce = 'bench';
    const uri = '/jpg/image.jpg';
    const response = digestResponse({ algorithm: 'SHA-256', username: USER, password: PASSWORD, realm, nonce, method: 'GET', uri, qop: 'auth', nc: ncText, cnonce });
    const authorization = `Digest username="${USER}", realm="${realm}", nonce="${nonce}", uri="${uri}", algorithm=SHA-256, response="${response}", opaque="${opaque}", qop=auth, nc=${ncText}, cnonce="${cnonce}"`;
    const res = await pool.request({ method: 'GET', path: uri, headers: { authorization } });
    await res.body.arrayBuffer();
  };
}

