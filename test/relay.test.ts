import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RELAY_SHORT_STRINGS, checkSequence, pulseRelay, readRelay, relayCommand, relayShortForm, runRelaySequence, setRelay } from '../lib/ops/relay';
import { NONE_HINT } from '../lib/input/payload';
import { IpcamError } from '../lib/errors/errors';
import { startSimulator, type RecordedRequest, type RelayChange, type Simulator } from '../lib/simulator';
import { DeviceClient } from '../lib/transport/client';
import { nodeFiles, PROJECT_ROOT, SIM_PASSWORD, SIM_USER, waitFor, expectRejection } from './helpers';
import { ACCEPTED_RELAY_STRINGS, REJECTED_RELAY_PAYLOADS } from './relay-payloads';

const OUTPUT = '/cgi-bin/admin/output';

/** `actual` ms lies in [expected - 50, expected + 1200): timers never fire early, late is tolerated. */
function assertAbout(actual: number, expected: number, what: string): void {
  assert.ok(actual >= expected - 50 && actual < expected + 1200, `${what}: ${actual} ms, expected about ${expected} ms`);
}

describe('output relays (lib) against the simulator', function () {
  let sim: Simulator;
  let client: DeviceClient;

  beforeEach(async function () {
    sim = await startSimulator({ port: 0, username: SIM_USER, password: SIM_PASSWORD, auth: 'basic' });
    client = new DeviceClient({ host: '127.0.0.1', port: sim.port, auth: 'basic', username: SIM_USER, password: SIM_PASSWORD, timeout: 5000 });
  });

  afterEach(async function () {
    await client.close();
    await sim.close();
  });

  function requests(): RecordedRequest[] {
    return sim.state.requests.filter((r) => r.auth !== 'rejected');
  }

  /** The one request sent: GET /cgi-bin/admin/output with exactly this raw query. */
  function assertOnly(rawQuery: string): RecordedRequest {
    const all = requests();
    assert.equal(all.length, 1, `requests: ${all.map((r) => `${r.path}?${r.rawQuery}`).join(', ')}`);
    const [req] = all;
    assert.ok(req);
    assert.equal(req.method, 'GET');
    assert.equal(req.path, OUTPUT);
    assert.equal(req.rawQuery, rawQuery);
    return req;
  }

  function changes(port: number): Array<Omit<RelayChange, 'time'>> {
    return sim.state.io.relayLog.filter((c) => c.port === port).map(({ port: p, active }) => ({ port: p, active }));
  }

  describe('on and off', function () {
    it('on: action=1:/ with the slash encoded', async function () {
      assert.deepEqual(await setRelay(client, 1, true), { output: 1, active: true });
      const req = assertOnly('action=1%3A%2F');
      assert.deepEqual(req.query, [['action', '1:/']]);
      assert.equal(sim.state.io.outputs.get(1), true);
      assert.deepEqual(changes(1), [{ port: 1, active: true }]);
    });

    it('off: action=1:\\ with the backslash sent as %5C', async function () {
      sim.state.io.setOutput(1, true);
      sim.state.io.relayLog.length = 0;
      assert.deepEqual(await setRelay(client, 1, false), { output: 1, active: false });
      const req = assertOnly('action=1%3A%5C');
      assert.deepEqual(req.query, [['action', '1:\\']]);
      assert.equal(sim.state.io.outputs.get(1), false);
      assert.deepEqual(changes(1), [{ port: 1, active: false }]);
    });

    it('output 2 names its own relay and leaves relay 1 alone', async function () {
      assert.deepEqual(await setRelay(client, 2, true), { output: 2, active: true });
      assertOnly('action=2%3A%2F');
      assert.equal(sim.state.io.outputs.get(2), true);
      assert.equal(sim.state.io.outputs.get(1), false);
    });
  });

  describe('pulse', function () {
    it('300 ms: action=1:/300\\, active at once, inactive after >= 250 ms and < 1500 ms', async function () {
      const sent = Date.now();
      assert.deepEqual(await pulseRelay(client, 1, 300), { output: 1, active: false, pulse: 300 });
      const req = assertOnly('action=1%3A%2F300%5C');
      assert.deepEqual(req.query, [['action', '1:/300\\']]);
      assert.equal(sim.state.io.outputs.get(1), true, 'the relay is active while the pulse runs');
      await waitFor('the end of the pulse', () => sim.state.io.relayLog.length >= 2);
      const [on, off, ...more] = sim.state.io.relayLog;
      assert.equal(more.length, 0);
      assert.ok(on && off);
      assert.deepEqual([on.port, on.active, off.port, off.active], [1, true, 1, false]);
      const length = off.time - on.time;
      assert.ok(length >= 250 && length < 1500, `the pulse lasted ${length} ms`);
      const sinceSent = off.time - sent;
      assert.ok(sinceSent >= 250 && sinceSent < 1500, `inactive ${sinceSent} ms after sending`);
      assert.equal(sim.state.io.outputs.get(1), false);
    });

    it('a pulse given as text of digits, on output 2', async function () {
      assert.deepEqual(await pulseRelay(client, 2, '150'), { output: 2, active: false, pulse: 150 });
      assertOnly('action=2%3A%2F150%5C');
      await waitFor('the end of the pulse', () => changes(2).length >= 2);
      assert.deepEqual(changes(2), [
        { port: 2, active: true },
        { port: 2, active: false },
      ]);
    });
  });

  describe('sequence', function () {
    it('1:/300\\500/300\\ is sent whole, encoded, and played with its waits', async function () {
      const sequence = '1:/300\\500/300\\';
      assert.deepEqual(await runRelaySequence(client, 1, sequence), { output: 1, active: false, sequence });
      const req = assertOnly('action=1%3A%2F300%5C500%2F300%5C');
      assert.deepEqual(req.query, [['action', sequence]]);
      await waitFor('the whole sequence', () => sim.state.io.relayLog.length >= 4);
      const log = sim.state.io.relayLog;
      assert.deepEqual(
        log.map((c) => [c.port, c.active]),
        [
          [1, true],
          [1, false],
          [1, true],
          [1, false],
        ],
      );
      const start = log[0]?.time ?? NaN;
      // Offsets from the first action: 300, 300 + 500, 300 + 500 + 300.
      assertAbout((log[1]?.time ?? NaN) - start, 300, 'first inactive');
      assertAbout((log[2]?.time ?? NaN) - start, 800, 'second active');
      assertAbout((log[3]?.time ?? NaN) - start, 1100, 'second inactive');
      for (let i = 1; i < log.length; i++) assert.ok((log[i]?.time ?? NaN) >= (log[i - 1]?.time ?? NaN), 'out of order');
    });

    it('the answer is the state the sequence ends in', async function () {
      assert.deepEqual(await runRelaySequence(client, 2, '2:\\100/'), { output: 2, active: true, sequence: '2:\\100/' });
      assertOnly('action=2%3A%5C100%2F');
      await waitFor('the end of the sequence', () => changes(2).length >= 2);
      assert.equal(sim.state.io.outputs.get(2), true);
    });

    it('without an id the sequence is sent for the output asked for', async function () {
      assert.deepEqual(await runRelaySequence(client, 2, ':/100\\'), { output: 2, active: false, sequence: '2:/100\\' });
      assertOnly('action=2%3A%2F100%5C');
      await waitFor('the end of the sequence', () => changes(2).length >= 2);
      assert.deepEqual(changes(1), []);
    });

    it('checkSequence spells out the action it will send', function () {
      assert.deepEqual(checkSequence(' 1:/300\\500/300\\ ', 1), { action: '1:/300\\500/300\\', output: 1, finalActive: false });
      assert.deepEqual(checkSequence(':/', 3), { action: '3:/', output: 3, finalActive: true });
    });
  });

  describe('check', function () {
    it('reads the state: check=<id>, answered as { output, active }', async function () {
      sim.state.io.setOutput(2, true);
      assert.deepEqual(await readRelay(client, 2), { output: 2, active: true });
      assertOnly('check=2');
      assert.deepEqual(await readRelay(client, 1), { output: 1, active: false });
      assert.deepEqual(
        requests().map((r) => r.rawQuery),
        ['check=2', 'check=1'],
      );
    });

    it('follows what on and off did', async function () {
      await setRelay(client, 1, true);
      assert.deepEqual(await readRelay(client, 1), { output: 1, active: true });
      await setRelay(client, 1, false);
      assert.deepEqual(await readRelay(client, 1), { output: 1, active: false });
    });

    it('an output the device does not have is a device refusal, not a made-up state', async function () {
      await expectRejection(readRelay(client, 7), 'EHTTP');
    });
  });

  describe('bad input is EINPUT and sends nothing', function () {
    const cases: Array<{ what: string; run: (c: DeviceClient) => Promise<unknown>; message: RegExp }> = [
      { what: "a sequence with an unknown character ('1:/300x')", run: (c) => runRelaySequence(c, 1, '1:/300x'), message: /unknown character "x"/ },
      { what: "a sequence with a space ('1:/300 \\')", run: (c) => runRelaySequence(c, 1, '1:/300 \\'), message: /unknown character/ },
      { what: 'a sequence naming another output', run: (c) => runRelaySequence(c, 1, '2:/300\\'), message: /output 2/ },
      { what: 'a sequence without an action character', run: (c) => runRelaySequence(c, 1, '1:300'), message: /not \[id\]/ },
      { what: 'a sequence without a colon', run: (c) => runRelaySequence(c, 1, '1/300\\'), message: /not \[id\]/ },
      { what: "a wait with no action after it ('1:/300')", run: (c) => runRelaySequence(c, 1, '1:/300'), message: /not \[id\]/ },
      { what: "an action without a wait before it ('1://')", run: (c) => runRelaySequence(c, 1, '1://'), message: /not \[id\]/ },
      { what: 'an empty sequence', run: (c) => runRelaySequence(c, 1, ''), message: /sequence/i },
      { what: 'a sequence that is not text', run: (c) => runRelaySequence(c, 1, 42), message: /sequence/i },
      { what: 'pulse 0', run: (c) => pulseRelay(c, 1, 0), message: /pulse/i },
      { what: 'pulse -300', run: (c) => pulseRelay(c, 1, -300), message: /pulse/i },
      { what: "pulse '300ms'", run: (c) => pulseRelay(c, 1, '300ms'), message: /pulse/i },
      { what: 'no pulse length', run: (c) => pulseRelay(c, 1, undefined), message: /pulse/i },
      { what: 'output 0', run: (c) => setRelay(c, 0, true), message: /output/i },
      { what: 'output 1.5 (check)', run: (c) => readRelay(c, 1.5), message: /output/i },
    ];
    for (const c of cases) {
      it(c.what, async function () {
        await expectRejection(c.run(client), 'EINPUT', c.message);
        assert.equal(sim.state.requestCount, 0, 'a request was sent');
        assert.deepEqual(sim.state.io.relayLog, []);
      });
    }
  });
});

describe('relay commands (short forms and the object form)', function () {
  const accepted: Array<[unknown, string]> = [
    [true, 'on'],
    [false, 'off'],
    [1, 'on'],
    [0, 'off'],
    ['on', 'on'],
    ['off', 'off'],
    [' On ', 'on'],
    ['OFF\n', 'off'],
    ['off ', 'off'],
    ['pulse', 'pulse'],
    [' PULSE', 'pulse'],
    ['check', 'check'],
    ['Check ', 'check'],
    ...ACCEPTED_RELAY_STRINGS.map((c): [unknown, string] => [c.payload, c.mode]),
    [{ state: 'false' }, 'off'],
  ];
  for (const [payload, mode] of accepted) {
    it(`${JSON.stringify(payload)} is ${mode}, whatever Mode says`, function () {
      if (typeof payload !== 'object') assert.equal(relayShortForm(payload), mode);
      for (const settingsMode of ['on', 'off', 'pulse', 'sequence', 'check']) assert.equal(relayCommand(payload, { mode: settingsMode }).mode, mode);
    });
  }

  it('absent payload (undefined or null) and an object without state, pulse or sequence do what Mode says', function () {
    for (const payload of [undefined, null, {}, { plate: 'ABC123', listType: 'whiteList' }, { state: null, output: undefined }]) {
      assert.equal(relayCommand(payload, { mode: 'pulse', pulse: '700' }).mode, 'pulse');
      assert.equal(relayCommand(payload, { mode: 'off' }).mode, 'off');
    }
    assert.equal(relayCommand(undefined).mode, 'on', 'Mode defaults to on');
  });

  it('the object form: state (a short form or "sequence"), else sequence, else pulse', function () {
    assert.deepEqual(relayCommand({ output: 2, state: 'ON' }, { mode: 'off', output: '1' }), { mode: 'on', output: 2, pulse: undefined, sequence: undefined });
    assert.equal(relayCommand({ state: false }, { mode: 'on' }).mode, 'off');
    assert.equal(relayCommand({ state: 0 }, { mode: 'on' }).mode, 'off');
    assert.equal(relayCommand({ state: 'check' }).mode, 'check');
    assert.equal(relayCommand({ state: 'sequence' }, { sequence: '1:/' }).mode, 'sequence');
    assert.deepEqual(relayCommand({ sequence: '1:/100\\' }, { mode: 'on' }), { mode: 'sequence', output: 1, pulse: undefined, sequence: '1:/100\\' });
    assert.deepEqual(relayCommand({ pulse: 300 }, { mode: 'off', pulse: '1000' }), { mode: 'pulse', output: 1, pulse: 300, sequence: undefined });
    assert.equal(relayCommand({ state: 'off', pulse: 300 }).mode, 'off', 'state decides');
  });

  for (const c of REJECTED_RELAY_PAYLOADS) {
    it(`${c.what} is EINPUT under every Mode`, function () {
      for (const mode of ['on', 'off', 'pulse', 'sequence', 'check']) {
        assert.throws(
          () => relayCommand(c.payload, { mode, pulse: '1000', sequence: '1:/' }),
          (err: unknown) => err instanceof IpcamError && err.code === 'EINPUT' && /not a relay command/.test(err.message),
        );
      }
    });
  }

  it('the README and the node help name exactly the strings lib/ops/relay.ts accepts', function () {
    const readmeRow = readFileSync(join(PROJECT_ROOT, 'README.md'), 'utf8').split('\n').find((l) => l.startsWith('| relay |')) ?? '';
    const help = readFileSync(nodeFiles('ipcam-relay').help, 'utf8');
    const tip = readFileSync(nodeFiles('ipcam-relay').dialog, 'utf8');
    const words = [...RELAY_SHORT_STRINGS.keys()];
    assert.deepEqual(words, ['true', 'false', 'on', 'off', '1', '0', 'pulse', 'check']);
    for (const word of words) {
      assert.ok(readmeRow.includes(`'${word}'`), `README relay row lacks '${word}'`);
      assert.ok(help.includes(`<code>"${word}"</code>`), `help lacks "${word}"`);
      assert.ok(tip.includes(`<code>"${word}"</code>`), `editor tip lacks "${word}"`);
    }
  });

  it('the error text shows a long payload shortened', function () {
    assert.throws(
      () => relayCommand('x'.repeat(10_000)),
      // The payload is cut at 40 characters; the rest is our own text (the forms, the Overrides hint).
      (err: unknown) => err instanceof IpcamError && err.message.length < 300 + NONE_HINT.length && !err.message.includes('x'.repeat(41)),
    );
  });
});
