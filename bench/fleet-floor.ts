/**
 * The floor of the fleet bench, run as a child process: the same idle streams held open by bare
 * `node:http` requests (a socket each, Basic auth), every byte read and counted, nothing parsed,
 * no timers. What a Node.js process cannot do for less while devices send what they send idle.
 *
 * argv: the paths to open on every device, then `--`, then the devices' base URLs. Run with
 * --expose-gc. Prints `ready` once every answer has begun; then answers each line on stdin with
 * one line of JSON: `cpu`, `process.cpuUsage()` and the bytes read so far; `memory`, RSS and heap
 * after two collections 500 ms apart, before the streams were opened and now. Ends when stdin
 * closes.
 */
import { request, type ClientRequest } from 'node:http';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { PASSWORD, USER } from './measure';

interface Memory {
  rss: number;
  heapUsed: number;
}

/** As ChildRuntime's settled probe: collect, let freed pages go, collect again. */
async function settledMemory(): Promise<Memory> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run the floor with --expose-gc');
  gc();
  await sleep(500);
  gc();
  gc();
  const { rss, heapUsed } = process.memoryUsage();
  return { rss, heapUsed };
}

async function main(): Promise<void> {
  const before = await settledMemory();
  const args = process.argv.slice(2);
  const split = args.indexOf('--');
  const paths = args.slice(0, split);
  const urls = args.slice(split + 1);
  const authorization = 'Basic ' + Buffer.from(`${USER}:${PASSWORD}`).toString('base64');
  const requests: ClientRequest[] = [];
  let bytes = 0;
  let waiting = paths.length * urls.length;
  for (const url of urls) {
    for (const path of paths) {
      const req = request(`${url}${path}`, { agent: false, headers: { authorization } }, (res) => {
        if (res.statusCode !== 200) throw new Error(`${url}${path} answered ${res.statusCode}`);
        res.on('data', (chunk: Buffer) => (bytes += chunk.length));
        if (--waiting === 0) console.log('ready');
      });
      req.end();
      requests.push(req);
    }
  }
  const lines = createInterface({ input: process.stdin });
  lines.on('line', (line) => {
    if (line.trim() === 'cpu') console.log(JSON.stringify({ ...process.cpuUsage(), bytes }));
    if (line.trim() === 'memory') void settledMemory().then((now) => console.log(JSON.stringify({ before, now })));
  });
  lines.on('close', () => {
    for (const req of requests) req.destroy();
    process.exit(0);
  });
}

void main();
