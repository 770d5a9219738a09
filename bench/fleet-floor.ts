/**
 * The floor of the fleet bench, run as a child process: the same idle streams held open by bare
 * `node:http` requests (a socket each, Basic auth), every byte read and counted, nothing parsed,
 * no timers. What a Node.js process cannot do for less while devices send what they send idle.
 *
 * argv: the paths to open on every device, then `--`, then the devices' base URLs. Prints
 * `ready` once every answer has begun; then, for each line `cpu` on stdin, one line of JSON
 * with `process.cpuUsage()` and the bytes read so far. Ends when stdin closes.
 */
import { request, type ClientRequest } from 'node:http';
import { createInterface } from 'node:readline';
import { PASSWORD, USER } from './measure';

function main(): void {
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
  });
  lines.on('close', () => {
    for (const req of requests) req.destroy();
    process.exit(0);
  });
}

main();
