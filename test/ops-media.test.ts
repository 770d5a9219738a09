/**
 * Audio and RTSP (spec 4.8) from the operation table: sendAudio's exact request (a Buffer or a
 * bounded readable stream), describeRtsp against the simulator's RTSP port with Basic and Digest
 * answered by the HTTP code, its defaults from the device parameters, a device that never
 * answers or answers too much (timeout or bound, the socket freed), and bad input as EINPUT with
 * nothing sent. RTSP credentials go only to the device's own host and the RTSP port it names (a
 * port in the message is EINPUT), Digest only for an https device node.
 */
import { strict as assert } from 'node:assert';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { Readable } from 'node:stream';
import { REQUEST_OPERATIONS, chooseOperation, runOperation } from '../lib/ops';
import { AUDIO_MAX_BYTES, RTSP_PORT_PARAM, RTSP_STREAM_PARAM } from '../lib/ops/media';
import { parseSdp } from '../lib/transport/sdp';
import { startSimulator, type Simulator, type SimulatorAuth } from '../lib/simulator';
import { DeviceClient } from '../lib/transport/client';
import { rtspAuthMode } from '../lib/transport/rtsp';
import { expectRejection, fixture, SIM_PASSWORD, SIM_USER, waitFor } from './helpers';
import { requestOp as op } from './ops-helper';
import { useSimulatorAndClient } from './ops-fixture';

const EXPECTED_MEDIA = [
  { type: 'video', codec: 'H264', clockRate: 90000, control: 'trackID=1' },
  { type: 'audio', codec: 'PCMU', clockRate: 8000, control: 'trackID=2' },
];

describe('operations: audio and RTSP', function () {
  let sim: Simulator;
  let client: DeviceClient;

  useSimulatorAndClient((made) => ({ sim, client } = made));

  beforeEach(function () {
    sim.state.media.rtspRequests.length = 0;
    sim.state.media.rtspSilent = false;
    sim.state.params.set(RTSP_PORT_PARAM, String(sim.rtspPort));
  });

  /** The device names `port` as its RTSP port (the only way a test reaches another RTSP server). */
  function deviceRtspPort(port: number): void {
    sim.state.params.set(RTSP_PORT_PARAM, String(port));
  }

  describe('sendAudio', function () {
    it('POSTs the bytes to /audio_in with their content type (audio/basic by default)', async function () {
      const audio = Buffer.from('\xff\x7f\x00\x80'.repeat(2000), 'latin1');
      const before = sim.state.media.audioBytes;
      const result = await runOperation(client, op('sendAudio'), { audio });
      assert.deepEqual(result.payload, { ok: true, bytes: audio.length });
      const request = sim.state.requests.find((r) => r.auth !== 'rejected');
      assert.equal(request?.method, 'POST');
      assert.equal(request?.path, '/audio_in');
      assert.equal(request?.rawQuery, '');
      assert.equal(request?.headers['content-type'], 'audio/basic');
      assert.equal(request?.headers['content-length'], String(audio.length));
      assert.equal(sim.state.media.audioBytes - before, audio.length);
    });

    it('takes another listed content type', async function () {
      await runOperation(client, op('sendAudio'), { audio: Buffer.from('RIFF....WAVE'), contentType: 'audio/x-wav' });
      assert.equal(sim.state.media.lastAudioType, 'audio/x-wav');
    });

    it('reads a readable stream to its end (bounded), then sends it in one request', async function () {
      const before = sim.state.media.audioBytes;
      const pieces = [Buffer.alloc(3000, 1), Buffer.alloc(5000, 2), Buffer.alloc(1, 3)];
      const result = await runOperation(client, op('sendAudio'), { audio: Readable.from(pieces) });
      assert.deepEqual(result.payload, { ok: true, bytes: 8001 });
      assert.equal(sim.state.media.audioBytes - before, 8001);
    });

    it('a stream that never ends is let go on a stop, nothing sent', async function () {
      const endless = new Readable({ read() {} });
      const controller = new AbortController();
      const running = runOperation(client, op('sendAudio'), { audio: endless }, { signal: controller.signal });
      endless.push(Buffer.alloc(100));
      setTimeout(() => controller.abort(), 50);
      await expectRejection(running, 'ECONN', /stopped/);
      assert.equal(endless.destroyed, true);
      assert.equal(sim.state.requestCount, 0);
    });

    describe('bad input is EINPUT and nothing is sent', function () {
      function* tooMuch(): Generator<Buffer> {
        const piece = Buffer.alloc(1024 * 1024);
        for (let i = 0; i <= AUDIO_MAX_BYTES / piece.length; i++) yield piece;
      }
      const cases: Array<[string, () => unknown]> = [
        ['no audio', () => ({})],
        ['audio as text', () => ({ audio: 'beep' })],
        ['an empty Buffer', () => ({ audio: Buffer.alloc(0) })],
        ['too large a Buffer', () => ({ audio: Buffer.alloc(AUDIO_MAX_BYTES + 1) })],
        ['an unknown content type', () => ({ audio: Buffer.from('x'), contentType: 'audio/ogg' })],
        ['a content type with a line break', () => ({ audio: Buffer.from('x'), contentType: 'audio/basic\r\nX-Evil: 1' })],
        ['a stream giving more than the cap', () => ({ audio: Readable.from(tooMuch()) })],
        ['a stream that fails', () => ({ audio: new Readable({ read() { this.destroy(new Error('microphone unplugged')); } }) })],
        ['a stream of objects', () => ({ audio: Readable.from([{ sample: 1 }]) })],
        ['an empty stream', () => ({ audio: Readable.from([]) })],
        ['an unknown parameter', () => ({ audio: Buffer.from('x'), volume: 5 })],
      ];
      for (const [what, input] of cases) {
        it(what, async function () {
          const before = sim.state.media.audioPosts;
          await expectRejection(runOperation(client, op('sendAudio'), input()), 'EINPUT');
          assert.equal(sim.state.requestCount, 0);
          assert.equal(sim.state.media.audioPosts, before);
        });
      }
    });
  });

  describe('describeRtsp against the simulator', function () {
    it('takes port and stream from the device parameters, answers Digest and parses the SDP', async function () {
      const { payload } = await runOperation(client, op('describeRtsp'), {});
      const url = `rtsp://127.0.0.1:${sim.rtspPort}/live.sdp`;
      assert.deepEqual((payload as { url: string }).url, url);
      assert.deepEqual((payload as { media: unknown }).media, EXPECTED_MEDIA);
      assert.match((payload as { sdp: string }).sdp, /^v=0\r\n/);

      const params = sim.state.requests.find((r) => r.auth !== 'rejected');
      assert.equal(params?.path, '/cgi-bin/view/param');
      assert.equal(params?.rawQuery, 'action=list&group=Network.RTSP');
      const seen = sim.state.media.rtspRequests;
      assert.deepEqual(seen.map((r) => [r.method, r.url, r.cseq, r.status]), [
        ['DESCRIBE', url, '1', 401],
        ['DESCRIBE', url, '2', 200],
      ]);
      assert.equal(seen[0]?.authorization, undefined);
      assert.match(seen[1]?.authorization ?? '', /^Digest username="admin", realm="ipcam-simulator", nonce="[^"]+", uri="rtsp:\/\/127\.0\.0\.1:\d+\/live\.sdp", algorithm=SHA-256, response="[0-9a-f]{64}"/);
    });

    it('with stream given, the port is still the one the device names', async function () {
      const { payload } = await runOperation(client, op('describeRtsp'), { stream: 'live.sdp' });
      assert.deepEqual((payload as { media: unknown }).media, EXPECTED_MEDIA);
      assert.equal(sim.state.requests.find((r) => r.auth !== 'rejected')?.rawQuery, 'action=list&group=Network.RTSP');
      assert.equal(sim.state.media.rtspRequests.at(-1)?.url, `rtsp://127.0.0.1:${sim.rtspPort}/live.sdp`);
    });

    for (const [auth, scheme] of [['digest', /^Digest /], ['basic', /^Basic /], ['none', /^$/]] as Array<[SimulatorAuth, RegExp]>) {
      it(`a device asking ${auth} is answered with the same code as HTTP`, async function () {
        const other = await startSimulator({ port: 0, username: SIM_USER, password: SIM_PASSWORD, auth, digestAlgorithms: ['MD5'] });
        const otherClient = new DeviceClient({ host: '127.0.0.1', port: other.port, username: SIM_USER, password: SIM_PASSWORD });
        try {
          const { payload } = await runOperation(otherClient, op('describeRtsp'), {});
          assert.deepEqual((payload as { media: unknown }).media, EXPECTED_MEDIA);
          const last = other.state.media.rtspRequests[other.state.media.rtspRequests.length - 1];
          assert.equal(last?.status, 200);
          assert.match(last?.authorization ?? '', scheme);
          if (auth === 'digest') assert.match(last?.authorization ?? '', /algorithm=MD5/);
        } finally {
          await otherClient.close();
          await other.close();
        }
      });
    }

    it('a refused password is EAUTH after one answered challenge, never a loop', async function () {
      const server = await recordingRtsp(['Digest realm="cam", nonce="n1", qop="auth", algorithm=MD5']);
      try {
        deviceRtspPort(server.port);
        const err = await expectRejection(runOperation(client, op('describeRtsp'), { stream: 'live.sdp' }), 'EAUTH');
        assert.ok(!err.message.includes(SIM_PASSWORD));
        const requests = server.received().match(/^DESCRIBE /gm) ?? [];
        assert.equal(requests.length, 2);
        assert.equal(server.received().match(/^Authorization: Digest /gm)?.length, 1);
      } finally {
        await server.close();
      }
    });

    it('an unknown stream is EHTTP with the RTSP status', async function () {
      const err = await expectRejection(runOperation(client, op('describeRtsp'), { stream: 'nothing/here' }), 'EHTTP', /RTSP 404/);
      assert.equal(err.status, 404);
    });

    it('a device stream parameter that is no stream name is EDEVICE, nothing of it sent', async function () {
      const saved = sim.state.params.get(RTSP_STREAM_PARAM) as string;
      sim.state.params.set(RTSP_STREAM_PARAM, 'live.sdp RTSP/1.0');
      try {
        await expectRejection(runOperation(client, op('describeRtsp'), {}), 'EDEVICE', /Network\.RTSP\.StreamName/);
        assert.equal(sim.state.media.rtspRequests.length, 0);
        sim.state.params.delete(RTSP_STREAM_PARAM);
        await expectRejection(runOperation(client, op('describeRtsp'), {}), 'EDEVICE', /give stream/);
      } finally {
        sim.state.params.set(RTSP_STREAM_PARAM, saved);
      }
    });

    it('a device that never answers is ETIMEOUT and the socket is freed', async function () {
      sim.state.media.rtspSilent = true;
      const slowClient = new DeviceClient({ host: '127.0.0.1', port: sim.port, username: SIM_USER, password: SIM_PASSWORD, timeout: 300 });
      try {
        await expectRejection(runOperation(slowClient, op('describeRtsp'), { stream: 'live.sdp' }), 'ETIMEOUT', /No answer in time from rtsp:/);
        await waitFor('the RTSP socket closed', () => sim.state.media.rtspConnections === 0);
      } finally {
        await slowClient.close();
      }
    });

    it('a stop (abort signal) ends the wait and frees the socket', async function () {
      sim.state.media.rtspSilent = true;
      const controller = new AbortController();
      const running = runOperation(client, op('describeRtsp'), { stream: 'live.sdp' }, { signal: controller.signal });
      await waitFor('the request reached the device', () => sim.state.media.rtspConnections === 1);
      controller.abort();
      await expectRejection(running, 'ECONN', /aborted/);
      await waitFor('the RTSP socket closed', () => sim.state.media.rtspConnections === 0);
    });

    it('nothing listening on the port is ECONN', async function () {
      const closed = createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      const port = (closed.address() as AddressInfo).port;
      await new Promise<void>((resolve) => closed.close(() => resolve()));
      deviceRtspPort(port);
      await expectRejection(runOperation(client, op('describeRtsp'), { stream: 'live.sdp' }), 'ECONN', /refused/);
    });

    describe('a hostile RTSP server', function () {
      let server: Server;
      const sockets = new Set<Socket>();
      let behaviour: (socket: Socket) => void = () => undefined;

      before(async function () {
        server = createServer((socket) => {
          sockets.add(socket);
          socket.on('close', () => sockets.delete(socket));
          socket.on('error', () => undefined);
          socket.once('data', () => behaviour(socket));
        });
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      });

      after(async function () {
        for (const socket of sockets) socket.destroy();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      });

      beforeEach(function () {
        deviceRtspPort((server.address() as AddressInfo).port);
      });

      it('an endless head is EPARSE at the bound, and the socket is freed', async function () {
        behaviour = (socket) => {
          socket.write('RTSP/1.0 200 OK\r\nCSeq: 1\r\n');
          const line = Buffer.from(`X-Filler: ${'a'.repeat(1000)}\r\n`);
          const timer = setInterval(() => (socket.destroyed ? clearInterval(timer) : socket.write(line)), 1);
        };
        await expectRejection(runOperation(client, op('describeRtsp'), { stream: 'live.sdp' }), 'EPARSE', /larger than/);
        await waitFor('the socket closed', () => sockets.size === 0);
      });

      it('a body larger than the bound is EPARSE', async function () {
        behaviour = (socket) => socket.write('RTSP/1.0 200 OK\r\nCSeq: 1\r\nContent-Length: 99999999\r\n\r\nv=0\r\n');
        await expectRejection(runOperation(client, op('describeRtsp'), { stream: 'live.sdp' }), 'EPARSE', /larger than/);
        await waitFor('the socket closed', () => sockets.size === 0);
      });

      it('an answer to another CSeq is EPARSE', async function () {
        behaviour = (socket) => socket.write('RTSP/1.0 200 OK\r\nCSeq: 7\r\nContent-Length: 0\r\n\r\n');
        await expectRejection(runOperation(client, op('describeRtsp'), { stream: 'live.sdp' }), 'EPARSE', /CSeq 7/);
      });

      it('HTTP on the RTSP port is EPARSE', async function () {
        behaviour = (socket) => socket.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n');
        await expectRejection(runOperation(client, op('describeRtsp'), { stream: 'live.sdp' }), 'EPARSE', /not RTSP/);
      });

      it('a close before the answer is ECONN', async function () {
        behaviour = (socket) => socket.end();
        await expectRejection(runOperation(client, op('describeRtsp'), { stream: 'live.sdp' }), 'ECONN', /closed/);
      });

      it('a description without SDP is EPARSE', async function () {
        behaviour = (socket) => socket.write('RTSP/1.0 200 OK\r\nCSeq: 1\r\nContent-Length: 5\r\n\r\nhello');
        await expectRejection(runOperation(client, op('describeRtsp'), { stream: 'live.sdp' }), 'EPARSE', /SDP/);
      });
    });

    describe('bad input is EINPUT and nothing is sent', function () {
      const cases: unknown[] = [
        { stream: '/live.sdp' },
        { stream: 'live sdp' },
        { stream: 'live.sdp\r\nCSeq: 9' },
        { stream: 'live%20sdp' },
        { stream: 'x'.repeat(129) },
        { stream: ['live.sdp'] },
        { port: 0 },
        { port: 65536 },
        { port: '1e3' },
        { port: 55.4 },
        { port: 554 },
        { stream: 'live.sdp', port: '8554' },
        { stream: 'live.sdp', transport: 'tcp' },
      ];
      for (const input of cases) {
        it(JSON.stringify(input).slice(0, 60), async function () {
          await expectRejection(runOperation(client, op('describeRtsp'), input), 'EINPUT');
          assert.equal(sim.state.requestCount, 0);
          assert.equal(sim.state.media.rtspRequests.length, 0);
        });
      }
    });
  });

  describe('SDP', function () {
    it('reads static payload types without rtpmap, and caps what it keeps', function () {
      const media = parseSdp('v=0\r\nm=audio 0 RTP/AVP 8\r\nm=video 0 RTP/AVP 26\r\na=control:rtsp://cam/track\u0000x\r\nm=application 0 RTP/AVP 107\r\n');
      assert.deepEqual(media, [
        { type: 'audio', codec: 'PCMA', clockRate: 8000 },
        { type: 'video', codec: 'JPEG', clockRate: 90000, control: 'rtsp://cam/trackx' },
        { type: 'application', codec: '107' },
      ]);
      const many = parseSdp(`v=0\n${'m=video 0 RTP/AVP 96\na=rtpmap:96 H265/90000\n'.repeat(100)}`);
      assert.equal(many.length, 16);
      assert.deepEqual(many[0], { type: 'video', codec: 'H265', clockRate: 90000 });
    });
  });

  it('neither operation is destructive; describeRtsp (read) may be named by msg, sendAudio (change: the device plays it) only by the node', function () {
    for (const name of ['sendAudio', 'describeRtsp']) assert.equal(op(name).destructive, false);
    assert.equal(chooseOperation(REQUEST_OPERATIONS, 'msg', 'describeRtsp'), op('describeRtsp'));
    assert.throws(() => chooseOperation(REQUEST_OPERATIONS, 'msg', 'sendAudio'), (err: Error & { code?: string }) => err.code === 'EINPUT');
    assert.equal(chooseOperation(REQUEST_OPERATIONS, 'sendAudio', undefined), op('sendAudio'));
  });

  it('the device password appears in no result or error', async function () {
    const texts = [JSON.stringify((await runOperation(client, op('describeRtsp'), {})).payload)];
    sim.state.media.rtspSilent = true;
    const slowClient = new DeviceClient({ host: '127.0.0.1', port: sim.port, username: SIM_USER, password: SIM_PASSWORD, timeout: 200 });
    try {
      const err = await expectRejection(runOperation(slowClient, op('describeRtsp'), {}), 'ETIMEOUT');
      texts.push(err.message, JSON.stringify(err));
    } finally {
      await slowClient.close();
    }
    for (const text of texts) assert.ok(!text.includes(SIM_PASSWORD), text.slice(0, 200));
  });
});

/**
 * A fake RTSP server that keeps every byte it gets and answers every request 401 with the
 * challenges given: what a device (or a stranger on another port) would learn from us.
 */
async function recordingRtsp(challenges: string[]): Promise<{ port: number; received: () => string; connections: () => number; close: () => Promise<void> }> {
  const chunks: Buffer[] = [];
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = createServer((socket) => {
    connections += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let pending = '';
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      pending += chunk.toString('latin1');
      for (let end = pending.indexOf('\r\n\r\n'); end >= 0; end = pending.indexOf('\r\n\r\n')) {
        const cseq = /^CSeq:\s*(\d+)/im.exec(pending.slice(0, end))?.[1] ?? '0';
        pending = pending.slice(end + 4);
        socket.write(['RTSP/1.0 401 Unauthorized', `CSeq: ${cseq}`, ...challenges.map((c) => `WWW-Authenticate: ${c}`), 'Content-Length: 0'].join('\r\n') + '\r\n\r\n');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    received: () => Buffer.concat(chunks).toString('latin1'),
    connections: () => connections,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe("describeRtsp: credentials go only to the device's own RTSP server, protected as the device node asks", function () {
  const BASIC = Buffer.from(`${SIM_USER}:${SIM_PASSWORD}`, 'utf8').toString('base64');
  const closers: Array<() => Promise<void>> = [];
  const tls = { key: fixture('sim-key.pem'), cert: fixture('sim-cert.pem') };

  afterEach(async function () {
    for (const close of closers.splice(0).reverse()) await close();
  });

  async function device(options: { tls?: boolean; simAuth?: SimulatorAuth; auth?: 'auto' | 'basic' | 'digest' }): Promise<{ sim: Simulator; client: DeviceClient }> {
    const sim = await startSimulator({ port: 0, username: SIM_USER, password: SIM_PASSWORD, auth: options.simAuth ?? 'any', ...(options.tls && { tls }) });
    closers.push(() => sim.close());
    const client = new DeviceClient({
      host: '127.0.0.1',
      port: sim.port,
      username: SIM_USER,
      password: SIM_PASSWORD,
      ...(options.tls && { protocol: 'https' as const, ca: tls.cert }),
      ...(options.auth && { auth: options.auth }),
    });
    closers.push(() => client.close());
    return { sim, client };
  }

  async function stranger(challenges: string[]): Promise<Awaited<ReturnType<typeof recordingRtsp>>> {
    const server = await recordingRtsp(challenges);
    closers.push(server.close);
    return server;
  }

  /** Nothing in `text` that carries the password: as given, or in a Basic token. */
  function assertNoCredentials(text: string): void {
    assert.ok(!text.includes(SIM_PASSWORD), 'the password was sent');
    assert.ok(!text.includes(BASIC), 'a Basic token was sent');
    assert.doesNotMatch(text, /^Authorization:/im);
  }

  it('a port in the message is EINPUT: no connection to it, nothing asked of the device', async function () {
    const { sim, client } = await device({});
    const server = await stranger(['Basic realm="anything"']);
    for (const port of [server.port, String(server.port), sim.rtspPort]) {
      await expectRejection(runOperation(client, op('describeRtsp'), { stream: 'live.sdp', port }), 'EINPUT', /takes no port.*Network\.RTSP\.Port.*nothing was sent/);
    }
    assert.equal(server.connections(), 0);
    assert.equal(server.received(), '');
    assert.equal(sim.state.requestCount, 0);
    assert.equal(sim.state.media.rtspRequests.length, 0);
  });

  it('the request goes to the device node host and the port the device names, never elsewhere', async function () {
    const { sim, client } = await device({});
    const server = await stranger(['Basic realm="anything"']);
    const { payload } = await runOperation(client, op('describeRtsp'), {});
    assert.equal((payload as { url: string }).url, `rtsp://127.0.0.1:${sim.rtspPort}/live.sdp`);
    assert.equal(server.connections(), 0);
  });

  for (const auth of ['auto', 'basic', 'digest'] as const) {
    it(`an https device node (auth ${auth}) whose RTSP server asks Basic: EAUTH, the password never reaches it`, async function () {
      const { sim, client } = await device({ tls: true, auth });
      const server = await stranger(['Basic realm="cam"']);
      sim.state.params.set(RTSP_PORT_PARAM, String(server.port));
      const err = await expectRejection(runOperation(client, op('describeRtsp'), {}), 'EAUTH', /Basic.*in clear.*https.*nothing was sent/);
      assert.ok(!err.message.includes(SIM_PASSWORD));
      const received = server.received();
      assert.match(received, /^DESCRIBE rtsp:\/\/127\.0\.0\.1:\d+\/live\.sdp RTSP\/1\.0\r\n/);
      assertNoCredentials(received);
    });
  }

  it('an https device node answers Digest, even when its auth setting is basic and the server offers Basic too', async function () {
    for (const auth of ['auto', 'basic'] as const) {
      const { sim, client } = await device({ tls: true, auth });
      const { payload } = await runOperation(client, op('describeRtsp'), {});
      assert.deepEqual((payload as { media: unknown }).media, EXPECTED_MEDIA);
      const seen = sim.state.media.rtspRequests;
      assert.match(seen.at(-1)?.authorization ?? '', /^Digest username="admin"/);
      assert.ok(seen.every((r) => !/^Basic/i.test(r.authorization ?? '')), 'Basic was sent over RTSP');
    }
  });

  it('an https device node whose RTSP server offers Basic and Digest answers Digest only', async function () {
    const { sim, client } = await device({ tls: true });
    const server = await stranger(['Basic realm="cam"', 'Digest realm="cam", nonce="abc123", qop="auth", algorithm=MD5']);
    sim.state.params.set(RTSP_PORT_PARAM, String(server.port));
    // The fake server refuses everything: after the Digest answer it is EAUTH, never Basic.
    await expectRejection(runOperation(client, op('describeRtsp'), {}), 'EAUTH');
    const received = server.received();
    assert.match(received, /^Authorization: Digest username="admin"/m);
    assertNoCredentials(received.replace(/^Authorization: Digest .*$/gm, ''));
    assert.ok(!received.includes(SIM_PASSWORD));
  });

  it('an http device node answers Basic when its setting allows it, as over HTTP', async function () {
    const { sim, client } = await device({ simAuth: 'basic' });
    await runOperation(client, op('describeRtsp'), {});
    assert.equal(sim.state.media.rtspRequests.at(-1)?.authorization, `Basic ${BASIC}`);
  });

  it('an http device node set to digest never answers a Basic RTSP server', async function () {
    const { sim, client } = await device({ auth: 'digest' });
    const server = await stranger(['Basic realm="cam"']);
    sim.state.params.set(RTSP_PORT_PARAM, String(server.port));
    await expectRejection(runOperation(client, op('describeRtsp'), {}), 'EAUTH', /does not offer Digest/);
    assertNoCredentials(server.received());
  });

  it('rtspAuthMode: https means Digest only; http follows the auth setting', function () {
    for (const auth of ['auto', 'basic', 'digest'] as const) {
      assert.equal(rtspAuthMode({ protocol: 'https', auth }), 'digest');
      assert.equal(rtspAuthMode({ protocol: 'http', auth }), auth);
    }
  });
});
