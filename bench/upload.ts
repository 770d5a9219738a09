/**
 * Memory of a 256 MiB firmware upload (preset, then the multipart POST) to a simulated device in
 * another process, Digest auth negotiated by a fresh client. Each upload runs in a child process
 * of its own, so that one round's high-water mark does not hide the next; the figure is the
 * child's peak RSS (`maxRSS`) above its RSS before the file was made, as a multiple of the file.
 * Ours (the file framed around its own Buffer and streamed) against the encoding used before,
 * in the same run: undici's FormData with the file in a Blob, encoded by `Response.arrayBuffer()`
 * into a Buffer, then sent through the same client. Rounds alternate the two; the simulator also
 * counts the bodies it read (one per upload is the contract, Digest included).
 */
import { spawn } from 'node:child_process';
import { Blob } from 'node:buffer';
import { once } from 'node:events';
import { FormData, Response } from 'undici';
import { FIRMWARE_MAX_BYTES, UPLOAD_FIELD, UPLOAD_FILENAMES, UPLOAD_PROBE } from '../lib/ops/maintenance';
import { targetOf } from '../lib/ops/runner';
import { DeviceClient } from '../lib/transport/client';
import { PASSWORD, USER } from './measure';
import { formatSpread, spreadOf, startSimulatorProcess } from './sim-process';

const ROUNDS = 3;
const FILE_BYTES = FIRMWARE_MAX_BYTES;
const FIRMWARE = '/cgi-bin/admin/firmwareupgrade';
const MODES = ['streamed', 'blob+arrayBuffer'] as const;
type Mode = (typeof MODES)[number];

interface ChildFigures {
  /** RSS before the file was made, and the peak of the whole process (bytes). */
  before: number;
  peak: number;
  ms: number;
}

const MIB = 1024 * 1024;

/** In the child: one upload of `FILE_BYTES` the way `mode` says. */
async function uploadOnce(mode: Mode, port: number): Promise<ChildFigures> {
  const before = process.memoryUsage.rss();
  const file = Buffer.alloc(FILE_BYTES, 0x5a);
  const client = new DeviceClient({ host: '127.0.0.1', port, username: USER, password: PASSWORD, timeout: 60_000 });
  const start = Date.now();
  try {
    await client.request({ path: `${FIRMWARE}?action=preset` });
    if (mode === 'streamed') {
      await client.request({ method: 'POST', path: FIRMWARE, upload: { field: UPLOAD_FIELD, filename: UPLOAD_FILENAMES.firmware, data: file }, probe: targetOf(UPLOAD_PROBE), timeout: 600_000 });
    } else {
      const form = new FormData();
      form.append(UPLOAD_FIELD, new Blob([file], { type: 'application/octet-stream' }), UPLOAD_FILENAMES.firmware);
      const encoded = new Response(form);
      const contentType = encoded.headers.get('content-type') ?? 'multipart/form-data';
      const body = Buffer.from(await encoded.arrayBuffer());
      await client.request({ method: 'POST', path: FIRMWARE, body, contentType, timeout: 600_000 });
    }
  } finally {
    await client.close();
  }
  // maxRSS is in KiB: the high-water mark of the whole process.
  return { before, peak: process.resourceUsage().maxRSS * 1024, ms: Date.now() - start };
}

async function runChild(mode: Mode, port: number): Promise<ChildFigures> {
  const child = spawn(process.execPath, [__filename, '--child', mode, String(port)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`the ${mode} upload child exited with ${code}`);
  return JSON.parse(out) as ChildFigures;
}

/** Bodies the simulator read for the upload since the last reset, and their bytes. */
async function bodiesRead(base: string): Promise<{ count: number; bytes: number }> {
  const res = await fetch(`${base}/_sim/requests`);
  const requests = (await res.json()) as Array<{ method: string; path: string; bodyBytes: number }>;
  const uploads = requests.filter((r) => r.path === FIRMWARE && r.bodyBytes > 0);
  return { count: uploads.length, bytes: uploads.reduce((sum, r) => sum + r.bodyBytes, 0) };
}

export async function uploadMemory(): Promise<void> {
  console.log(`\n## Upload memory: a ${FILE_BYTES / MIB} MiB firmware image, fresh client, Digest; peak RSS above the RSS before the file, as a multiple of the file (${ROUNDS} rounds, alternating)`);
  const sim = await startSimulatorProcess(1);
  const base = sim.urls[0] as string;
  const figures = new Map<Mode, { ratio: number[]; mib: number[]; seconds: number[]; bodies: number[] }>(MODES.map((m) => [m, { ratio: [], mib: [], seconds: [], bodies: [] }]));
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const mode of round % 2 === 0 ? MODES : [...MODES].reverse()) {
        await fetch(`${base}/_sim/requests`, { method: 'DELETE' });
        const f = await runChild(mode, sim.ports[0] as number);
        const read = await bodiesRead(base);
        const entry = figures.get(mode) as { ratio: number[]; mib: number[]; seconds: number[]; bodies: number[] };
        entry.ratio.push((f.peak - f.before) / FILE_BYTES);
        entry.mib.push((f.peak - f.before) / MIB);
        entry.seconds.push(f.ms / 1000);
        entry.bodies.push(read.count);
      }
    }
  } finally {
    await sim.stop();
  }
  const streamed = figures.get('streamed') as { mib: number[] };
  const old = figures.get('blob+arrayBuffer') as { mib: number[] };
  console.table(
    MODES.map((mode) => {
      const f = figures.get(mode) as { ratio: number[]; mib: number[]; seconds: number[]; bodies: number[] };
      return {
        encoding: mode,
        'peak above baseline, MiB': formatSpread(spreadOf(f.mib), 0),
        'x file': formatSpread(spreadOf(f.ratio), 2),
        'upload s': formatSpread(spreadOf(f.seconds), 2),
        'bodies read per upload': f.bodies.join(','),
      };
    }),
  );
  const ratios = streamed.mib.map((m, i) => (old.mib[i] as number) / m);
  console.log(`blob+arrayBuffer / streamed peak: ${formatSpread(spreadOf(ratios), 2)}x; streamed overhead beyond the file itself: ${formatSpread(spreadOf(streamed.mib.map((m) => m - FILE_BYTES / MIB)), 0)} MiB`);
}

if (require.main === module && process.argv[2] === '--child') {
  void uploadOnce(process.argv[3] as Mode, Number(process.argv[4])).then(
    (figures) => process.stdout.write(JSON.stringify(figures)),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
