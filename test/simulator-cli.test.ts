import { strict as assert } from 'node:assert';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

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
    } finally {
      child.kill('SIGINT');
      const [code] = await exited;
      assert.equal(code, 0);
    }
  });

  for (const count of ['0', '501', '2.5', 'many']) {
    it(`refuses --count ${count} with the usage, exit code 2`, function () {
      const run = spawnSync(process.execPath, [CLI, '--port', '0', '--count', count], { encoding: 'utf8', timeout: 10_000 });
      assert.equal(run.status, 2);
      assert.match(run.stderr, /--count is a whole number from 1 to 500/);
    });
  }
});
