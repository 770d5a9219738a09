/**
 * WS-Discovery against simulators answering on loopback (their own UDP ports: no multicast, so
 * nothing leaves the machine), and against hostile senders over real UDP sockets: malformed,
 * oversized and endless floods of answers are bounded, the search ends on time, nothing crashes.
 * The multicast search as users run it: discovery-multicast.test.ts.
 */
import { strict as assert } from 'node:assert';
import { createSocket, type Socket } from 'node:dgram';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { identifyDevices, searchClient } from '../lib/discovery/identify';
import { checkInterface, discoverDevices, parseTargets, type DiscoveryTarget } from '../lib/discovery/probe';
import { httpEndpoint, readScopes, readXaddrs } from '../lib/discovery/wsd';
import { startSimulator, type Simulator } from '../lib/simulator';
import { expectRejection, SIM_PASSWORD, waitFor } from './helpers';

/** The bounds the node's help and README give ("16 per address, 32 KiB per answer read"), written here once. */
const DOCUMENTED = { perAddress: 16, answerBytes: 32 * 1024 } as const;

/** Slack for a loaded machine (two cores shared with other test runs): a bound, not a measurement. */
const SLACK = 1500;

const target = (sim: Simulator): DiscoveryTarget => ({ address: '127.0.0.1', port: sim.discoveryPort });

/** A ProbeMatches as a camera writes it, answering `relatesTo`, pointing at `port`. */
function probeMatches(relatesTo: string | undefined, port: number, name = 'Hostile', extra = ''): string {
  return (
    '<?xml version="1.0" encoding="UTF-8"?><e:Envelope xmlns:e="http://www.w3.org/2003/05/soap-envelope" xmlns:w="http://schemas.xmlsoap.org/ws/2004/08/addressing" xmlns:d="http://schemas.xmlsoap.org/ws/2005/04/discovery">' +
    `<e:Header>${relatesTo ? `<w:RelatesTo>${relatesTo}</w:RelatesTo>` : ''}</e:Header><e:Body><d:ProbeMatches><d:ProbeMatch>` +
    `<w:EndpointReference><w:Address>urn:uuid:hostile-${port}</w:Address></w:EndpointReference>` +
    `<d:Scopes>onvif://www.onvif.org/name/${encodeURIComponent(name)} onvif://www.onvif.org/hardware/X1</d:Scopes>` +
    `<d:XAddrs>http://127.0.0.1:${port}/onvif/device_service</d:XAddrs>${extra}` +
    '</d:ProbeMatch></d:ProbeMatches></e:Body></e:Envelope>'
  );
}

/** A fake device on a loopback address: `onProbe` decides what it sends back, as often as it likes. */
async function fakeDevice(address: string, onProbe: (reply: (data: string | Buffer) => void, probe: string, socket: Socket) => void): Promise<{ port: number; socket: Socket; close(): Promise<void> }> {
  const socket = createSocket('udp4');
  socket.on('message', (msg, from) => onProbe((data) => socket.send(typeof data === 'string' ? Buffer.from(data) : data, from.port, from.address, () => undefined), msg.toString('utf8'), socket));
  socket.on('error', () => undefined);
  await new Promise<void>((resolve) => socket.bind(0, address, resolve));
  return { port: socket.address().port, socket, close: () => new Promise<void>((resolve) => socket.close(() => resolve())) };
}

function messageIdOf(probe: string): string {
  return /<a:MessageID>([^<]+)</.exec(probe)?.[1] ?? '';
}

describe('WS-Discovery', function () {
  this.timeout(30_000);
  const sims: Simulator[] = [];
  const fakes: Array<{ close(): Promise<void> }> = [];

  afterEach(async function () {
    await Promise.all(fakes.splice(0).map((f) => f.close()));
  });
  after(async function () {
    await Promise.all(sims.splice(0).map((s) => s.close()));
  });

  async function threeSimulators(): Promise<Simulator[]> {
    if (sims.length === 0) {
      for (const [i, name] of ['Gate north', 'Gate south', 'Yard & Co'].entries()) {
        const sim = await startSimulator({ password: SIM_PASSWORD });
        sim.state.device.deviceName = name;
        sim.state.device.mac = `58:5b:69:00:00:0${i + 1}`;
        sim.state.params.set('Network.eth0.MACAddress', sim.state.device.mac);
        sims.push(sim);
      }
    }
    return sims;
  }

  it('finds three simulators on loopback with their scopes and service addresses', async function () {
    const list = await threeSimulators();
    const result = await discoverDevices({ durationMs: 1000, multicast: false, targets: list.map(target) });
    assert.equal(result.truncated, false);
    assert.equal(result.devices.length, 3);
    for (const sim of list) {
      const found = result.devices.find((d) => d.port === sim.port);
      assert.ok(found, `simulator on ${sim.port} found`);
      assert.equal(found.address, '127.0.0.1');
      assert.equal(found.protocol, 'http');
      assert.equal(found.name, sim.state.device.deviceName);
      assert.equal(found.hardware, 'SIM-IPC-2MP');
      assert.equal(found.location, 'country/simulated, city/loopback');
      assert.deepEqual(found.xaddrs, [`http://127.0.0.1:${sim.port}/onvif/device_service`]);
      assert.match(found.endpoint ?? '', /^urn:uuid:[0-9a-f-]{36}$/);
    }
    // The list is ordered (address, then port): a flow can compare two runs.
    assert.deepEqual(result.devices.map((d) => d.port), [...result.devices.map((d) => d.port)].sort((a, b) => a - b));
  });

  it('identifies them with the credentials given: interface, model, firmware, MAC (Digest)', async function () {
    const list = await threeSimulators();
    const { devices } = await discoverDevices({ durationMs: 800, multicast: false, targets: list.map(target) });
    for (const sim of list) sim.resetRequests();
    const identified = await identifyDevices(devices, (d) => searchClient(d, { username: 'admin', password: SIM_PASSWORD }));
    for (const [i, sim] of list.entries()) {
      const d = identified.find((x) => x.port === sim.port);
      assert.ok(d);
      assert.equal(d.interface, 'xml');
      assert.equal(d.model, 'SIM-IPC-2MP');
      assert.equal(d.firmware, '5.1.2.0-sim');
      assert.equal(d.mac, `58:5b:69:00:00:0${i + 1}`);
      assert.equal(d.error, undefined);
      assert.ok(sim.state.requests.some((r) => r.auth === 'digest'));
    }
  });

  it('never sends a typed password in clear: a Basic-only device gets no Authorization header (EAUTH)', async function () {
    const basic = await startSimulator({ auth: 'basic', password: SIM_PASSWORD });
    try {
      const { devices } = await discoverDevices({ durationMs: 600, multicast: false, targets: [target(basic)] });
      assert.equal(devices.length, 1);
      const [d] = await identifyDevices(devices, (x) => searchClient(x, { username: 'admin', password: SIM_PASSWORD }));
      assert.equal(d?.error?.code, 'EAUTH');
      assert.ok(basic.state.requests.length > 0);
      for (const r of basic.state.requests) assert.equal(r.headers['authorization'], undefined);
    } finally {
      await basic.close();
    }
  });

  it('a service address naming another host is shown, never used: the web port is read on the sender only', function () {
    assert.deepEqual(httpEndpoint('192.168.1.20', ['http://10.0.0.9:8080/onvif/device_service']), { protocol: 'http', port: 80 });
    assert.deepEqual(httpEndpoint('192.168.1.20', ['https://192.168.1.20/onvif/device_service']), { protocol: 'https', port: 443 });
    assert.deepEqual(httpEndpoint('192.168.1.20', ['http://192.168.1.20:8000/x', 'http://192.168.1.20:9000/y']), { protocol: 'http', port: 8000 });
    // Only http(s), no user info, at most four, each bounded.
    assert.deepEqual(readXaddrs('ftp://a/ http://u:p@b/ http://c/ ' + 'http://d/'.repeat(1) + ` http://${'e'.repeat(300)}/ http://f/ http://g/ http://h/`), ['http://c/', 'http://d/', 'http://f/', 'http://g/']);
  });

  it('scopes: percent-decoded, on one line, bounded; other scopes ignored', function () {
    const scopes = readScopes(`onvif://www.onvif.org/name/Front%20gate%0Acam onvif://www.onvif.org/hardware/${'X'.repeat(500)} onvif://www.onvif.org/location/city/Lund onvif://www.onvif.org/location/country/%E0%A4%A bogus://x/name/evil onvif://www.onvif.org/type/ptz`);
    assert.equal(scopes.name, 'Front gate cam');
    assert.equal(scopes.hardware, undefined, 'a 500-character scope is skipped');
    assert.equal(scopes.location, 'city/Lund, country/%E0%A4%A');
    assert.ok(readScopes(`onvif://www.onvif.org/name/${'n'.repeat(300)}`).name!.length <= 64 + 3, 'cut, with an ellipsis');
  });

  it('settings: targets and interface are checked (EINPUT), nothing sent', async function () {
    assert.deepEqual(parseTargets('127.0.0.1, 127.0.0.2:4000'), [{ address: '127.0.0.1', port: 3702 }, { address: '127.0.0.2', port: 4000 }]);
    assert.deepEqual(parseTargets(''), []);
    for (const bad of ['camera.local', '127.0.0.1:0', '127.0.0.1:70000', '300.1.1.1', Array.from({ length: 65 }, () => '127.0.0.1').join(',')]) {
      await expectRejection(Promise.resolve().then(() => parseTargets(bad)), 'EINPUT');
    }
    assert.equal(checkInterface(''), undefined);
    assert.equal(checkInterface('127.0.0.1'), '127.0.0.1');
    await expectRejection(Promise.resolve().then(() => checkInterface('192.0.2.77')), 'EINPUT', /not an IPv4 address of this machine/);
  });

  it('drops malformed, oversized, foreign and deeply nested answers; the good answer among them is kept', async function () {
    const good = await threeSimulators();
    const hostile = await fakeDevice('127.0.0.1', (reply, probe) => {
      const id = messageIdOf(probe);
      reply('not xml at all <<<');
      reply(Buffer.alloc(DOCUMENTED.answerBytes + 1, 0x3c));
      reply(Buffer.alloc(60_000, 0x20));
      reply('<a>'.repeat(5000) + '</a>'.repeat(5000));
      reply('<!DOCTYPE x [<!ENTITY e "e">]><x>&e;</x>');
      reply(probeMatches('uuid:someone-else', 1111));
      reply(`<?xml version="1.0"?><Envelope><Body><ProbeMatches>${'<ProbeMatch><XAddrs>http://127.0.0.1:1/</XAddrs></ProbeMatch>'.repeat(50)}</ProbeMatches></Body></Envelope>`);
      reply(probeMatches(id, 2222, 'ok one'));
    });
    fakes.push(hostile);
    const result = await discoverDevices({ durationMs: 1000, multicast: false, targets: [target(good[0] as Simulator), { address: '127.0.0.1', port: hostile.port }] });
    const ports = result.devices.map((d) => d.port);
    assert.ok(ports.includes((good[0] as Simulator).port));
    assert.ok(ports.includes(2222), 'the well-formed answer of the hostile sender is read');
    assert.ok(!ports.includes(1111), 'an answer to another probe is not ours');
    // The 50-match answer gives at most 4 matches (one port: 1), the rest are dropped.
    assert.equal(ports.filter((p) => p === 1).length, 1);
    assert.ok(result.dropped >= 6);
  });

  it('an endless flood from one address: at most 16 kept, the search ends on time, the event loop keeps running', async function () {
    let sent = 0;
    let flooding = true;
    const hostile = await fakeDevice('127.0.0.1', (reply, probe) => {
      const id = messageIdOf(probe);
      const burst = (): void => {
        if (!flooding) return;
        for (let i = 0; i < 50; i++) reply(probeMatches(id, 10_000 + (sent++ % 40_000), `flood ${sent}`, '<d:Big>' + 'x'.repeat(2000) + '</d:Big>'));
        setImmediate(burst);
      };
      burst();
    });
    fakes.push(hostile);
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    const started = Date.now();
    const result = await discoverDevices({ durationMs: 1500, multicast: false, targets: [{ address: '127.0.0.1', port: hostile.port }] });
    const took = Date.now() - started;
    flooding = false;
    delay.disable();
    assert.ok(sent > 1000, `the flood ran (${sent} datagrams)`);
    assert.equal(result.devices.length, DOCUMENTED.perAddress);
    assert.ok(result.dropped > 0);
    // Contract bounds: the search ends at its duration, and no single turn of the loop blocked for long.
    assert.ok(took < 1500 + SLACK, `took ${took} ms`);
    assert.ok(delay.max / 1e6 < SLACK, `longest event-loop delay ${(delay.max / 1e6).toFixed(0)} ms`);
  });

  it('answers from ever new addresses: the answer limit ends the search early (truncated)', async function () {
    const senders = [];
    for (let i = 2; i < 10; i++) {
      const fake = await fakeDevice(`127.0.0.${i}`, (reply, probe) => reply(probeMatches(messageIdOf(probe), 80, `dev ${i}`)));
      fakes.push(fake);
      senders.push({ address: `127.0.0.${i}`, port: fake.port });
    }
    const started = Date.now();
    // The answers come at once: the limit ends the search long before its duration (a bound below it, with the slack).
    const durationMs = 10_000;
    const result = await discoverDevices({ durationMs, multicast: false, targets: senders, maxAnswers: 5 });
    assert.equal(result.truncated, true);
    assert.equal(result.devices.length, 5);
    assert.ok(Date.now() - started < 1000 + SLACK && 1000 + SLACK < durationMs, 'ended at the limit, before its duration');
  });

  it('abort ends the search at once and closes its socket', async function () {
    const handles = (): number => process.getActiveResourcesInfo().filter((r) => r === 'UDPWrap').length;
    const before = handles();
    const controller = new AbortController();
    const running = discoverDevices({ durationMs: 10_000, multicast: false, targets: [], signal: controller.signal });
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(handles(), before + 1);
    const started = Date.now();
    controller.abort();
    await running;
    assert.ok(Date.now() - started < 500 + SLACK, 'ended at the abort, long before its duration');
    // The handle is released by libuv a turn after the close callback.
    await waitFor('the search socket released', () => handles() === before, 500 + SLACK);
  });
});
