/**
 * Audio and RTSP (spec 4.8) from the operation table: sendAudio's exact request (a Buffer or a
 * bounded readable stream), describeRtsp against the simulator's RTSP port with Basic and Digest
 * answered by the HTTP code, its defaults from the device parameters, a device that never
 * answers or answers too much (timeout or bound, the socket freed), and bad input as EINPUT with
 * nothing sent.
 */
import { strict as assert } from 'node:assert';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { Readable } from 'node:stream';
import { REQUEST_OPERATIONS, chooseOperation, runOperation } from '../lib/ops';
import { AUDIO_MAX_BYTES, RTSP_STREAM_PARAM } from '../lib/ops/media';
import { parseSdp } from '../lib/sdp';
import { startSimulator, type Simulator, type SimulatorAuth } from '../lib/simulator';
import { DeviceClient } from '../lib/transport/client';
import { expectRejection, SIM_PASSWORD, SIM_USER, waitFor } from './helpers';
import { requestOp as op } from './ops-helper';

const EXPECTED_MEDIA = [
  { type: 'video', codec: 'H264', clockRate: 90000, control: 'trackID=1' },
  { type: 'audio', codec: 'PCMU', clockRate: 8000, control: 'trackID=2' },
];

describe('operations: audio and RTSP', function () {
  let sim: Simulator;
  let client: DeviceClient;

  before(async function () {
    sim = await startSimulator({ port: 0, username: SIM_USER, password: SIM_PASSWORD });
    client = new DeviceClient({ host: '127.0.0.1', port: sim.port, username: SIM_USER, password: SIM_PASSWORD });
  });

  after(async function () {
    await client.close();
    await sim.close();
  });

  beforeEach(function () {
    sim.resetRequests();
    sim.state.media.rtspRequests.length = 0;
    sim.state.media.rtspSilent = false;
  });

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

    it('with stream and port given, asks the device nothing over HTTP', async function () {
      const { payload } = await runOperation(client, op('describeRtsp'), { stream: 'live.sdp', port: String(sim.rtspPort) });
      assert.deepEqual((payload as { media: unknown }).media, EXPECTED_MEDIA);
      assert.equal(sim.state.requestCount, 0);
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

    it('a wrong password is EAUTH after one answered challenge, never a loop', async function () {
      const stranger = new DeviceClient({ host: '127.0.0.1', port: sim.port, username: SIM_USER, password: `${SIM_PASSWORD}!` });
      try {
        const err = await expectRejection(runOperation(stranger, op('describeRtsp'), { stream: 'live.sdp', port: sim.rtspPort }), 'EAUTH');
        assert.ok(!err.message.includes(SIM_PASSWORD));
        assert.equal(sim.state.media.rtspRequests.length, 2);
      } finally {
        await stranger.close();
      }
    });

    it('an unknown stream is EHTTP with the RTSP status', async function () {
      const err = await expectRejection(runOperation(client, op('describeRtsp'), { stream: 'nothing/here', port: sim.rtspPort }), 'EHTTP', /RTSP 404/);
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
        await expectRejection(runOperation(slowClient, op('describeRtsp'), { stream: 'live.sdp', port: sim.rtspPort }), 'ETIMEOUT', /No answer in time from rtsp:/);
        await waitFor('the RTSP socket closed', () => sim.state.media.rtspConnections === 0);
      } finally {
        await slowClient.close();
      }
    });

    it('a stop (abort signal) ends the wait and frees the socket', async function () {
      sim.state.media.rtspSilent = true;
      const controller = new AbortController();
      const running = runOperation(client, op('describeRtsp'), { stream: 'live.sdp', port: sim.rtspPort }, { signal: controller.signal });
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
      await expectRejection(runOperation(client, op('describeRtsp'), { stream: 'live.sdp', port }), 'ECONN', /refused/);
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

      const port = (): number => (server.address() as AddressInfo).port;

      it('an endless head is EPARSE at the bound, and the socket is freed', async function () {
        behaviour = (socket) => {
          socket.write('RTSP/1.0 200 OK\r\nCSeq: 1\r\n');
          const line = Buffer.from(`X-Filler: ${'a'.repeat(1000)}\r\n`);
          const timer = setInterval(() => (socket.destroyed ? clearInterval(timer) : socket.write(line)), 1);
        };
        await expectRejection(runOperation(client, op('describeRtsp'), { stream: 'live.sdp', port: port() }), 'EPARSE', /larger than/);
        await waitFor('the socket closed', () => sockets.size === 0);
      });

      it('a body larger than the bound is EPARSE', async function () {
        behaviour = (socket) => socket.write('RTSP/1.0 200 OK\r\nCSeq: 1\r\nContent-Length: 99999999\r\n\r\nv=0\r\n');
        await expectRejection(runOperation(client, op('describeRtsp'), { stream: 'live.sdp', port: port() }), 'EPARSE', /larger than/);
        await waitFor('the socket closed', () => sockets.size === 0);
      });

      it('an answer to another CSeq is EPARSE', async function () {
        behaviour = (socket) => socket.write('RTSP/1.0 200 OK\r\nCSeq: 7\r\nContent-Length: 0\r\n\r\n');
        await expectRejection(runOperation(client, op('describeRtsp'), { stream: 'live.sdp', port: port() }), 'EPARSE', /CSeq 7/);
      });

      it('HTTP on the RTSP port is EPARSE', async function () {
        behaviour = (socket) => socket.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n');
        await expectRejection(runOperation(client, op('describeRtsp'), { stream: 'live.sdp', port: port() }), 'EPARSE', /not RTSP/);
      });

      it('a close before the answer is ECONN', async function () {
        behaviour = (socket) => socket.end();
        await expectRejection(runOperation(client, op('describeRtsp'), { stream: 'live.sdp', port: port() }), 'ECONN', /closed/);
      });

      it('a description without SDP is EPARSE', async function () {
        behaviour = (socket) => socket.write('RTSP/1.0 200 OK\r\nCSeq: 1\r\nContent-Length: 5\r\n\r\nhello');
        await expectRejection(runOperation(client, op('describeRtsp'), { stream: 'live.sdp', port: port() }), 'EPARSE', /SDP/);
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
