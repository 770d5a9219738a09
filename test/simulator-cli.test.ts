import { strict as assert } from 'node:assert';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { freePort } from './runtime-child';

const CLI = join(__dirname, '..', 'lib', 'simulator', 'cli.js');

describe('ipcam-simulator CLI', function () {
  this.timeout(20_000);

  it('--count 3 --port 0: three devices on their own ports, each with its own state; SIGINT stops them all', async function () {
    const child = spawn(process.execPath, [CLI, '--port', '0', '--count', '3'], { stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = once(child, 'exit');
    try {
      const urls: string[] = [];
      for await (const line of createInterface({ input: child.stdout })) {
        const url = /listening on (http:\/\/[^\s,]+)/.exec(line)?.[1];
        if (url) urls.push(url);
        if (urls.length === 3) break;
      }
      assert.equal(new Set(urls).size, 3, `distinct addresses: ${urls.join(' ')}`);
      const set = await fetch(`${urls[1]}/_sim/io`, { method: 'POST', body: JSON.stringify({ input: 1, active: true }) });
      assert.equal(set.status, 200);
      const inputs = await Promise.all(urls.map(async (url) => ((await (await fetch(`${url}/_sim/io`)).json()) as { inputs: Record<string, boolean> }).inputs['1']));
      assert.deepEqual(inputs, [false, true, false]);
      // Each a device of its own to an inventory keyed by MAC (and serial number).
      const devices = await Promise.all(urls.map(async (url) => ((await (await fetch(`${url}/_sim/state`)).json()) as { device: { mac: string; sn: string } }).device));
      assert.deepEqual(devices.map((d) => d.mac), ['58:5b:69:00:00:01', '58:5b:69:00:00:02', '58:5b:69:00:00:03']);
      assert.equal(new Set(devices.map((d) => d.sn)).size, 3);
    } finally {
      child.kill('SIGINT');
      const [code] = await exited;
      assert.equal(code, 0);
    }
  });

  it('a MAC from the port (the same port, the same MAC; another port, another), or from --mac, counted up by --count', async function () {
    const macs = async (args: string[], count: number): Promise<string[]> => {
      const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
      const exited = once(child, 'exit');
      const found: string[] = [];
      try {
        for await (const line of createInterface({ input: child.stdout })) {
          const mac = /, MAC ([0-9a-f:]{17}),/.exec(line)?.[1];
          if (mac) found.push(mac);
          if (found.length === count) break;
        }
      } finally {
        child.kill('SIGINT');
        await exited;
      }
      return found;
    };
    const port = await freePort();
    const [first] = await macs(['--port', String(port)], 1);
    assert.equal(first, `58:5b:69:00:${((port >> 8) & 0xff).toString(16).padStart(2, '0')}:${(port & 0xff).toString(16).padStart(2, '0')}`);
    assert.deepEqual(await macs(['--port', '0', '--count', '2', '--mac', '02-AA-00-00-00-FF'], 2), ['02:aa:00:00:00:ff', '02:aa:00:00:01:00']);
  });

  it('refuses a --mac that is no MAC, exit code 2', function () {
    const run = spawnSync(process.execPath, [CLI, '--port', '0', '--mac', '58:5b:69:00:00'], { encoding: 'utf8', timeout: 10_000 });
    assert.equal(run.status, 2);
    assert.match(run.stderr, /a MAC is six hex pairs/);
  });

  for (const count of ['0', '501', '2.5', 'many']) {
    it(`refuses --count ${count} with the usage, exit code 2`, function () {
      const run = spawnSync(process.execPath, [CLI, '--port', '0', '--count', count], { encoding: 'utf8', timeout: 10_000 });
      assert.equal(run.status, 2);
      assert.match(run.stderr, /--count is a whole number from 1 to 500/);
    });
  }
});
