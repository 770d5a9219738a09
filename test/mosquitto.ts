/**
 * A real MQTT broker for the Home Assistant tests: Debian's Mosquitto, started by the test on a
 * free loopback port with a config file in a temp dir, killed on teardown. `IPCAM_MOSQUITTO`
 * points at another binary.
 *
 * A machine without Mosquitto still passes `npm test`: those suites are skipped with one line
 * saying how to run them. CI sets `IPCAM_REQUIRE_BROKER=1`, so there a missing broker is a
 * failure, as a missing browser is (test/browser.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './runtime-child';

export const MOSQUITTO = process.env['IPCAM_MOSQUITTO'] ?? '/usr/sbin/mosquitto';

let told = false;

/** Call first in a suite's `before` hook: skips the suite without a broker, or fails when `IPCAM_REQUIRE_BROKER` is set. */
export function needBroker(ctx: Mocha.Context, suite: string): void {
  if (existsSync(MOSQUITTO)) return;
  const how = 'install it with "apt-get install -y mosquitto", or set IPCAM_MOSQUITTO to a mosquitto binary';
  if (process.env['IPCAM_REQUIRE_BROKER']) throw new Error(`Mosquitto is not at ${MOSQUITTO}: ${how} (IPCAM_REQUIRE_BROKER is set, so the ${suite} tests may not be skipped)`);
  if (!told) {
    told = true;
    console.log(`  (MQTT broker tests skipped: no Mosquitto at ${MOSQUITTO}; ${how})`);
  }
  ctx.skip();
}

export class Mosquitto {
  /** What the broker printed (its errors), for a failure's message. */
  output = '';
  private exited: Promise<void> = Promise.resolve();

  private constructor(
    readonly port: number,
    private readonly dir: string,
    private readonly child: ChildProcess,
  ) {
    child.stdout?.on('data', (c: Buffer) => (this.output = (this.output + c.toString('utf8')).slice(-64 * 1024)));
    child.stderr?.on('data', (c: Buffer) => (this.output = (this.output + c.toString('utf8')).slice(-64 * 1024)));
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
  }

  get url(): string {
    return `mqtt://127.0.0.1:${this.port}`;
  }

  static async start(): Promise<Mosquitto> {
    const dir = mkdtempSync(join(tmpdir(), 'ipcam-mosquitto-'));
    const port = await freePort();
    const config = join(dir, 'mosquitto.conf');
    // Run as root, Mosquitto drops to the user `mosquitto` unless told to stay: the test's user it is.
    const user = process.getuid?.() === 0 ? 'user root\n' : '';
    writeFileSync(config, `${user}listener ${port} 127.0.0.1\nallow_anonymous true\npersistence false\nlog_dest stderr\nlog_type error\nlog_type warning\n`);
    const child = spawn(MOSQUITTO, ['-c', config], { stdio: ['ignore', 'pipe', 'pipe'] });
    const broker = new Mosquitto(port, dir, child);
    const deadline = Date.now() + 10_000;
    while (!(await accepts(port))) {
      if (child.exitCode !== null || Date.now() > deadline) {
        await broker.stop();
        throw new Error(`mosquitto did not start on port ${port}: ${broker.output}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return broker;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGTERM');
    const forced = setTimeout(() => this.child.kill('SIGKILL'), 5000);
    await this.exited;
    clearTimeout(forced);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
