/**
 * "Search network" behind adminAuth, in a real Node-RED child: the endpoint needs the permission
 * of editing an ipcam-device (a read-only user and an anonymous caller are refused, and no probe
 * is sent for them), and its answer never holds a credential, typed or stored.
 */
import { strict as assert } from 'node:assert';
import { startSimulator, type Simulator } from '../lib/simulator';
import { SIM_PASSWORD } from './helpers';
import { ChildRuntime } from './runtime-child';
import { assertNoSecret } from './node-helper';

const ADMIN_PASSWORD = 'admin-login-pw';
const VIEWER_PASSWORD = 'viewer-login-pw';
const STORED_PASSWORD = 'st0red:device-pw';

/** adminAuth without bcrypt: a custom authenticate function (Node-RED's documented form). */
function adminAuth(): string {
  const users = { admin: { password: ADMIN_PASSWORD, permissions: '*' }, viewer: { password: VIEWER_PASSWORD, permissions: 'read' } };
  return `adminAuth: {
    type: 'credentials',
    users: function (username) {
      const u = ${JSON.stringify(users)}[username];
      return Promise.resolve(u ? { username: username, permissions: u.permissions } : null);
    },
    authenticate: function (username, password) {
      const u = ${JSON.stringify(users)}[username];
      return Promise.resolve(u && u.password === password ? { username: username, permissions: u.permissions } : null);
    }
  },`;
}

describe('Search network endpoint behind adminAuth (Node-RED child)', function () {
  this.timeout(90_000);
  const sims: Simulator[] = [];
  let red: ChildRuntime | undefined;

  before(async function () {
    sims.push(await startSimulator({ password: STORED_PASSWORD }), await startSimulator({ password: SIM_PASSWORD }), await startSimulator({ password: SIM_PASSWORD }));
    const discovery = { targets: sims.map((s) => `127.0.0.1:${s.discoveryPort}`), multicast: false };
    red = new ChildRuntime({ extraSettings: `${adminAuth()}\n  ipcamDiscovery: ${JSON.stringify(discovery)},` });
    await red.start();
  });

  after(async function () {
    await red?.stop();
    await Promise.all(sims.map((s) => s.close()));
  });

  async function token(username: string, password: string, scope = '*'): Promise<string> {
    const res = await fetch(`${red?.adminUrl}/auth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: 'node-red-admin', grant_type: 'password', scope, username, password }).toString(),
    });
    assert.equal(res.status, 200, await res.clone().text());
    return ((await res.json()) as { access_token: string }).access_token;
  }

  async function search(bearer: string | undefined, body: object): Promise<{ status: number; text: string }> {
    const res = await fetch(`${red?.adminUrl}/ipcam-device/discover`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(bearer && { authorization: `Bearer ${bearer}` }) },
      body: JSON.stringify(body),
    });
    return { status: res.status, text: await res.text() };
  }

  const probesAnswered = (): number => sims.reduce((n, sim) => n + sim.discoveryAnswered + sim.state.requestCount, 0);

  it('refuses an anonymous caller and a read-only user, sending nothing', async function () {
    const anonymous = await search(undefined, { username: 'admin', password: SIM_PASSWORD });
    assert.equal(anonymous.status, 401);
    const viewer = await search(await token('viewer', VIEWER_PASSWORD, 'read'), { username: 'admin', password: SIM_PASSWORD });
    assert.ok(viewer.status === 401 || viewer.status === 403, `status ${viewer.status}`);
    assert.doesNotMatch(viewer.text, /devices/);
    assert.equal(probesAnswered(), 0, 'no probe and no request reached a device');
  });

  it('answers an editor with the devices, identified, and never returns a credential', async function () {
    const admin = await token('admin', ADMIN_PASSWORD);
    // A deployed device (sim 0) with its stored password.
    const flows = [
      { id: 'tab1', type: 'tab', label: 'discover' },
      { id: 'dev0', type: 'ipcam-device', name: 'stored', host: '127.0.0.1', port: String(sims[0]?.port), protocol: 'http', auth: 'auto', tlsVerify: true, timeout: '', credentials: { username: 'admin', password: STORED_PASSWORD } },
    ];
    const deployed = await fetch(`${red?.adminUrl}/flows`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${admin}`, 'node-red-deployment-type': 'full' },
      body: JSON.stringify(flows),
    });
    assert.equal(deployed.status, 204, await deployed.text());
    const res = await search(admin, { id: 'dev0', username: 'admin', password: SIM_PASSWORD });
    assert.equal(res.status, 200, res.text);
    const body = JSON.parse(res.text) as { ok: boolean; devices: Array<{ port: number; deployed: boolean; model?: string }> };
    assert.equal(body.ok, true);
    assert.equal(body.devices.length, 3);
    for (const sim of sims) {
      const d = body.devices.find((x) => x.port === sim.port);
      assert.ok(d);
      assert.equal(d.model, 'SIM-IPC-2MP', 'identified: the deployed one with its stored password, the others with the typed one');
      assert.equal(d.deployed, sim === sims[0]);
    }
    assertNoSecret([res.text, red?.output ?? ''], SIM_PASSWORD);
    assertNoSecret([res.text, red?.output ?? ''], STORED_PASSWORD);
    assert.ok(red?.alive, 'the runtime is still running');
  });
});
