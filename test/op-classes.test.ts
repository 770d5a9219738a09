/**
 * Who may choose an operation (issue 18, item 5) and what a server test's names, users, paths and
 * passwords may hold (item 9), through the library against the simulator over real sockets: every
 * entry of both tables has a class that agrees with its destructive flag and with DESIGN; a
 * message chooses only `read` operations (EINPUT, nothing sent), a node's own setting runs the
 * others; shell syntax and leading dashes are EINPUT with nothing sent, ordinary values pass.
 */
import { strict as assert } from 'node:assert';
import { chooseOperation, EDGE_RECORD_OPERATIONS, NODE_OPERATIONS, OP_CLASSES, REQUEST_OPERATIONS, runOperation } from '../lib/ops';
import { SECRET_SHELL_CHARACTERS, SHELL_CHARACTERS } from '../lib/input/params';
import type { Simulator } from '../lib/simulator';
import type { DeviceClient } from '../lib/transport/client';
import { expectRejection } from './helpers';
import { DESIGN_CLASSES, ITEM_5, ITEM_5_ANSWERS, ITEM_5_LOCAL, SERVER_TESTS, SHELL_VALUES } from './op-classes-cases';
import { requestOp as op, requestTarget } from './ops-helper';
import { useSimulatorAndClient } from './ops-fixture';

describe('operation classes and shell-safe server tests (library)', function () {
  let sim: Simulator;
  let client: DeviceClient;

  useSimulatorAndClient((made) => ({ sim, client } = made));

  before(function () {
    sim.state.serveTests.stepMs = 5;
  });

  describe('the table', function () {
    it('every request operation has the class DESIGN gives it, and no operation is left out', function () {
      assert.deepEqual([...REQUEST_OPERATIONS.keys()].sort(), Object.keys(DESIGN_CLASSES).sort());
      for (const entry of REQUEST_OPERATIONS.values()) assert.equal(entry.class, DESIGN_CLASSES[entry.name], entry.name);
    });

    it('every entry of both tables has a class, and the class agrees with destructive', function () {
      for (const entry of [...REQUEST_OPERATIONS.values(), ...EDGE_RECORD_OPERATIONS.values()]) {
        assert.ok((OP_CLASSES as readonly string[]).includes(entry.class), `${entry.name}: class ${String(entry.class)}`);
        assert.equal(entry.destructive, entry.class === 'destructive', entry.name);
      }
    });

    it('ipcam-edgerecord holds read operations only (a message may choose any of them)', function () {
      for (const entry of EDGE_RECORD_OPERATIONS.values()) assert.equal(entry.class, 'read', entry.name);
    });
  });

  describe('a message chooses only read operations', function () {
    for (const [name] of ITEM_5) {
      it(`${name} from msg is EINPUT, says to set the operation in the node, nothing sent`, function () {
        assert.throws(() => chooseOperation(REQUEST_OPERATIONS, 'msg', name), (err: Error & { code?: string }) => {
          assert.equal(err.code, 'EINPUT');
          assert.match(err.message, new RegExp(`^${name} .*\\(class ${DESIGN_CLASSES[name] ?? '?'}\\): a message chooses only read operations.*set the operation in the node; nothing was sent$`));
          return true;
        });
        assert.equal(sim.state.requestCount, 0);
      });

      it(`${name} from a setting that names it is sent`, async function () {
        this.timeout(20000);
        const chosen = chooseOperation(REQUEST_OPERATIONS, name, undefined);
        assert.equal(chosen.name, name);
        const result = await runOperation(client, chosen, ITEM_5_LOCAL[name]);
        assert.deepEqual(result.payload, ITEM_5_ANSWERS[name]);
        assert.ok(sim.state.requestCount > 0, `${name} reached the device`);
      });
    }

    it('every read operation may come from a message; no other may', function () {
      for (const entry of REQUEST_OPERATIONS.values()) {
        if (entry.class === 'read') assert.equal(chooseOperation(REQUEST_OPERATIONS, 'msg', entry.name), entry);
        else assert.throws(() => chooseOperation(REQUEST_OPERATIONS, 'msg', entry.name), { code: 'EINPUT' }, entry.name);
      }
    });
  });

  describe('server tests refuse shell syntax and options', function () {
    it('the sets are decided once, in lib/input/params', function () {
      for (const c of ';|&$`()<>\\\'"') assert.ok(SECRET_SHELL_CHARACTERS.includes(c) && SHELL_CHARACTERS.includes(c), c);
      // A password keeps what runs nothing: globs, braces, ! # ~.
      for (const c of '*?{}[]!#~') assert.ok(!SECRET_SHELL_CHARACTERS.includes(c), c);
    });

    for (const test of SERVER_TESTS) {
      for (const field of test.fields) {
        it(`${test.name} ${field}: each shell value is EINPUT, nothing sent`, async function () {
          for (const value of SHELL_VALUES) {
            const err = await expectRejection(runOperation(client, op(test.name), { ...test.base, [field]: value }), 'EINPUT');
            // A password is never shown, not even the character that was refused.
            if (/password/i.test(field)) assert.ok(!err.message.includes(value), err.message);
          }
          assert.equal(sim.state.requestCount, 0);
        });
      }
    }

    it('ordinary values still pass and are sent: host names, IPs, user.name, DOMAIN, share paths', async function () {
      this.timeout(20000);
      const storage = ['//nas/share/cam1', '192.168.1.10/share/cam1', '192.168.1.5:/share/cam1', 'nas.local/cameras'];
      for (const server of storage) {
        await runOperation(client, op('testNetworkStorage'), { type: 'cifs', server, user: 'user.name', password: 'Pa55!word#*~{x}', workgroup: 'DOMAIN' });
      }
      for (const server of ['events.example.com', '192.168.1.10', 'fe80::1', 'relay-1.example.com']) {
        assert.ok(requestTarget('testHttpServer', { server, port: 80, user: 'cam-user', password: 'p%ss w+rd/1' }).includes('cmd=http'));
      }
      await runOperation(client, op('testSmtp'), { server: 'smtp-relay.example.com', user: 'user.name', password: 'p%ss w+rd/1', to: 'first.last@example.com', from: 'cam-1@example.com', timeout: 10 });
      await runOperation(client, op('testFtp'), { server: 'ftp.example.com', user: 'user.name', password: 'a-b', target: 'cams/cam-1/test file.txt', timeout: 10 });
      // The simulated device really asks that server (itself), without those credentials' password: 401.
      const http = await runOperation(client, op('testHttpServer'), { server: '127.0.0.1', port: sim.port, user: 'DOMAIN.user', proxy: 'proxy.lan', proxyUser: 'proxy_user' });
      assert.deepEqual(http.payload, { status: 401 });
      const servetests = sim.state.requests.filter((r) => r.path === '/cgi-bin/admin/servetest' && r.auth !== 'rejected');
      assert.equal(servetests.length, storage.length + 3, 'every ordinary value reached the device');
    });
  });
});

describe("the nodes' own device calls (issue 23: one home per device call)", function () {
  it('are entries with a class, in a table of their own: none is offered by ipcam-request or chosen by a message', function () {
    assert.ok(NODE_OPERATIONS.size >= 10, `only ${NODE_OPERATIONS.size} entries`);
    for (const [name, entry] of NODE_OPERATIONS) {
      assert.ok(OP_CLASSES.includes(entry.class), `${name} has class ${entry.class}`);
      assert.ok(!REQUEST_OPERATIONS.has(name), `${name} is offered by ipcam-request too`);
      assert.throws(() => chooseOperation(REQUEST_OPERATIONS, 'msg', name), /Unknown operation/);
    }
    for (const name of ['relaySwitch', 'relayPulse', 'relaySequence', 'ioCheck', 'detectionReading', 'cgiPtz', 'ptzControl', 'snapshot', 'addPlates', 'queryPlates', 'modifyPlate', 'deletePlates', 'getVehicleConfig', 'setVehicleConfig']) {
      assert.ok(NODE_OPERATIONS.has(name), `${name} is missing`);
    }
    assert.equal(NODE_OPERATIONS.get('ioCheck')?.class, 'read');
    assert.equal(NODE_OPERATIONS.get('relaySwitch')?.class, 'change');
    assert.equal(NODE_OPERATIONS.get('deletePlates')?.class, 'destructive');
  });
});
