#!/usr/bin/env node
import { startSimulator, simulatorMac, type Simulator, type SimulatorOptions } from './index';
import { checkMac, SIMULATOR_MAC_COUNT } from './state';

/** Most devices one process simulates (--count): a bound, and more than a loopback fleet test needs. */
const MAX_COUNT = 500;

const USAGE = `ipcam-simulator: a fake IP camera speaking the XML and CGI interfaces

Usage: ipcam-simulator [--port 8080] [--host 127.0.0.1] [--user admin] [--password admin]
                       [--auth any|basic|digest|none] [--http10] [--rtsp-port 8554] [--count 1]
                       [--discovery-port 0] [--discovery-multicast] [--mac 58:5b:69:00:1f:90]
  --rtsp-port  the RTSP port answering DESCRIBE (default: any free port, printed at start)
  --discovery-port  the UDP port answering WS-Discovery probes sent to it (default: any free
            port, printed at start)
  --discovery-multicast  also answer the multicast probes of a network search (UDP 3702, group
            239.255.255.250) where the machine allows it; else unicast only, as printed
  --count   simulate this many devices (1 to ${MAX_COUNT}), each with its own state, on ports
            --port, --port + 1, ... (--port 0: any free ports); one line each at start, in order
  --mac     the device's MAC (GetDeviceInfo, parameters, event posts; the serial number
            follows it); the next devices of --count count up from it. Default: from the port
            (58:5b:69:00:1f:90 on 8080), so that simulators on different ports differ; with
            --port 0, 58:5b:69:00:00:01 counting up
  --http10  answer as many cameras' small web servers do: HTTP/1.0, no Content-Length, the
            connection closed after every answer (streams end only when the connection closes)
Environment: IPCAM_SIM_PASSWORD sets the password without putting it on the command line.
Control API (JSON): GET /_sim/state, GET|DELETE /_sim/requests, POST|DELETE /_sim/faults,
  GET|DELETE /_sim/plates, POST /_sim/events (plate events, recorder plates by "group",
  keep-alives ("empty": true for an empty POST), alarm status, "kind": "tracking" bursts,
  a raw "currentTime" such as the 20-digit one of a recorder bug),
  GET|POST /_sim/io (inputs, relays, detection levels, stream faults and styles),
  POST /_sim/answer ({ "http10": true, "halfOpen": false }), GET /_sim/ptz
  (GET /_sim/state also names the WS-Discovery port: "discovery": { "port", "multicast" })`;

interface CliOptions extends SimulatorOptions {
  count: number;
}

function parseArgs(argv: string[]): CliOptions {
  const options: CliOptions = { port: 8080, password: process.env['IPCAM_SIM_PASSWORD'] ?? 'admin', count: 1 };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[i + 1];
    if (flag === '--help' || flag === '-h') {
      console.log(USAGE);
      process.exit(0);
    }
    if (flag === '--discovery-multicast') {
      options.discoveryMulticast = true;
      continue;
    }
    if (flag === '--http10') {
      options.answer = { http10: true };
      continue;
    }
    if (value === undefined) throw new Error(`${flag} needs a value`);
    i++;
    switch (flag) {
      case '--port':
        options.port = Number(value);
        break;
      case '--discovery-port':
        options.discoveryPort = Number(value);
        break;
      case '--rtsp-port':
        options.rtspPort = Number(value);
        break;
      case '--count':
        options.count = Number(value);
        if (!Number.isInteger(options.count) || options.count < 1 || options.count > MAX_COUNT) throw new Error(`--count is a whole number from 1 to ${MAX_COUNT}`);
        break;
      case '--mac':
        options.mac = checkMac(value);
        break;
      case '--host':
        options.host = value;
        break;
      case '--user':
        options.username = value;
        break;
      case '--password':
        options.password = value;
        break;
      case '--auth':
        if (!['any', 'basic', 'digest', 'none'].includes(value)) throw new Error('--auth is any, basic, digest or none');
        options.auth = value as SimulatorOptions['auth'];
        break;
      default:
        throw new Error(`unknown option ${flag}`);
    }
  }
  return options;
}

/**
 * The MAC of device `i` of this run: counted up from --mac, else from the port (stable for a
 * simulator started again on it, different for every port), else from 1.
 */
function macOf(options: SimulatorOptions, i: number): string {
  const device = (n: number): string => simulatorMac(n % SIMULATOR_MAC_COUNT);
  if (options.mac !== undefined) return device(parseInt(options.mac.slice(9).replace(/:/g, ''), 16) + i).replace(/^.{8}/, options.mac.slice(0, 8));
  return options.port === undefined || options.port === 0 ? device(1 + i) : device(options.port + i);
}

async function main(): Promise<void> {
  let options: CliOptions;
  try {
    options = parseArgs(process.argv.slice(2));
  } catch (err) {
    console.error(`${(err as Error).message}\n\n${USAGE}`);
    process.exit(2);
  }
  const { count, ...device } = options;
  const sims: Simulator[] = [];
  const stop = (): void => {
    void Promise.all(sims.map((sim) => sim.close())).then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  // One after the other: consecutive ports in order, and the lines in the order of the devices.
  for (let i = 0; i < count; i++) {
    const port = device.port === undefined || device.port === 0 ? 0 : device.port + i;
    // With --rtsp-port, the first device takes it; the others any free port.
    // The same for --discovery-port; with --discovery-multicast every device shares 3702.
    const sim = await startSimulator({ ...device, port, mac: macOf(device, i), ...(i > 0 && { rtspPort: 0, ...(!device.discoveryMulticast && { discoveryPort: 0 }) }) });
    sims.push(sim);
    console.log(`ipcam-simulator listening on ${sim.url}, MAC ${sim.state.device.mac}, RTSP on port ${sim.rtspPort}, WS-Discovery on UDP port ${sim.discoveryPort}${sim.discoveryMulticast ? ' and multicast' : ' (unicast)'} (user ${options.username ?? 'admin'}, auth ${options.auth ?? 'any'})`);
  }
}

void main().catch((err: unknown) => {
  console.error(`ipcam-simulator: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
