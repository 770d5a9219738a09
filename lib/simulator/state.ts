import { SimulatedAlarms } from './alarms';
import { SimulatedCertificates } from './certificates';
import { SimulatedEquipment } from './equipment';
import { SimulatedFiles } from './files';
import { SimulatedIo } from './io';
import { SimulatedMaintenance } from './maintenance';
import { SimulatedMedia } from './media';
import { SimulatedRecords } from './records';
import { SimulatedServeTests } from './servetest';
import { SimulatedPtz } from './ptz';
import { initialVehicleSettings, PlateDb, type VehicleSettings } from './plate-db';

/** The in-memory device the simulator plays. Tests and the control API read and change it. */
export interface SimulatedDeviceInfo {
  deviceName: string;
  model: string;
  brand: string;
  firmwareVersion: string;
  hardwareVersion: string;
  mac: string;
  sn: string;
}

/** Most bytes of a request body kept as text in the request log. */
export const RECORDED_BODY_MAX = 1024 * 1024;

export interface RecordedRequest {
  method: string;
  /** Path without the query. */
  path: string;
  /** The raw query string as received (still percent-encoded), without `?`. */
  rawQuery: string;
  /** Decoded query pairs in order, repeated keys kept. */
  query: Array<[string, string]>;
  headers: Record<string, string | string[] | undefined>;
  /** The body as UTF-8 text; only its first `RECORDED_BODY_MAX` bytes for a larger one (a firmware image). */
  body: string;
  /** How many bytes of body the simulator read for this request. */
  bodyBytes: number;
  /** Scheme the request was accepted with, or `rejected`. */
  auth: 'none' | 'basic' | 'digest' | 'rejected';
  /**
   * When the request's head was read, ms on CLOCK_MONOTONIC (`process.hrtime`): one clock for the
   * whole machine on Linux, so the bench can subtract a time another process took.
   */
  monotonic: number;
  /** When the request reached the simulator (ms since epoch). */
  time: number;
}

/** A fault the simulator injects into requests whose path starts with `path` (default: all). */
export interface Fault {
  /** `answer`: an authenticated request gets `body` with `contentType` and `status` (default 200): a device that lies about what it sends. */
  kind: 'stall' | 'drop' | 'status' | 'garbage' | 'slow' | 'answer';
  /** For `status`: the HTTP status to answer (401 comes with a real challenge); for `answer` (default 200). */
  status?: number;
  /** For `answer`: the Content-Type header (none when absent) and the body. */
  contentType?: string;
  body?: Buffer | string;
  /** For `slow`: delay before answering (ms). */
  delay?: number;
  path?: string;
  /** How many requests it hits before it is spent (default: until cleared). */
  times?: number;
}

/**
 * How the simulated device answers, as the small web servers of real firmware do; changeable at
 * run time (`sim.state.answer`, `POST /_sim/answer`).
 */
export interface AnswerStyle {
  /** `HTTP/1.0` status lines, no Content-Length, the connection closed after each answer (streams too). */
  http10: boolean;
  /** A half-open peer: requests are read and never answered, open streams stop, nothing is closed. */
  halfOpen: boolean;
  /** Text answers (parameter lists) in ISO-8859-1, declared `text/plain; charset=iso-8859-1`. */
  latin1: boolean;
  /** Parameter lines with spaces around the name, the `=` and the value, as some firmware writes them (field notes). */
  spacedParams: boolean;
  /** Relay actions refused as firmware does: HTTP 200 with `# Error: Error setting output`. */
  refuseRelay: boolean;
  /** CGI PTZ commands refused: HTTP 200 with a `# Error:` line. */
  refusePtz: boolean;
  /** I/O checks refused: HTTP 200 with a `# Error:` line. */
  refuseCheck: boolean;
  /** Input/output monitors and detection streams refused at their opening: HTTP 200 with a `# Error:` line, no stream. */
  refuseStream: boolean;
}

/** Where the device posts its events, as set by SetHttpPostConfig (`httpPost` block). */
export interface HttpPostConfig {
  enabled: boolean;
  serverIp: string;
  serverPort: number;
  /** Seconds between keep-alive posts (30-120). */
  keepalive: number;
  /** Path on the server (`URL`). */
  url: string;
}

export interface SimulatorState {
  device: SimulatedDeviceInfo;
  /** Device parameters by name without `root.`, e.g. `Image.I0.Appearance.Resolution`. */
  params: Map<string, string>;
  /** The most recent requests (at most `MAX_RECORDED`), oldest first. */
  requests: RecordedRequest[];
  /** Every request received since start, including those no longer in `requests`. */
  requestCount: number;
  faults: Fault[];
  plates: PlateDb;
  vehicle: VehicleSettings;
  /** Inputs, relays and detection levels with their CGI endpoints and streams. */
  io: SimulatedIo;
  ptz: SimulatedPtz;
  /** Event posting target; undefined until SetHttpPostConfig. */
  httpPost: HttpPostConfig | undefined;
  answer: AnswerStyle;
  equipment: SimulatedEquipment;
  files: SimulatedFiles;
  certificates: SimulatedCertificates;
  maintenance: SimulatedMaintenance;
  serveTests: SimulatedServeTests;
  media: SimulatedMedia;
  records: SimulatedRecords;
  /** The account the device accepts (ModifyPassword changes it). */
  account: { username: string; password: string };
  /** Alarm states of GetAlarmStatus. */
  alarms: SimulatedAlarms;
}

export const MAX_RECORDED = 1000;

/** The vendor part of every simulated MAC (the OUI of the devices the specs describe). */
const MAC_PREFIX = [0x58, 0x5b, 0x69];
/** How many devices the MAC's device part tells apart. */
export const SIMULATOR_MAC_COUNT = 0x1000000;

/**
 * The MAC of simulated device number `n` (1 = `58:5b:69:00:00:01`, the simulator's own default):
 * stable for the same number, different for different ones below SIMULATOR_MAC_COUNT. A fleet
 * of simulators numbers its devices (or takes their ports), so that an inventory keyed by MAC
 * sees each of them.
 */
export function simulatorMac(n: number): string {
  if (!Number.isInteger(n) || n < 0 || n >= SIMULATOR_MAC_COUNT) throw new RangeError(`a simulated device number is 0 to ${SIMULATOR_MAC_COUNT - 1}`);
  return [...MAC_PREFIX, (n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff].map((b) => b.toString(16).padStart(2, '0')).join(':');
}

/** A MAC as the simulator takes it: six hex pairs separated by `:` or `-` (written lower case). */
export function checkMac(value: string): string {
  if (!/^[0-9a-f]{2}([:-][0-9a-f]{2}){5}$/i.test(value)) throw new RangeError(`a MAC is six hex pairs, e.g. 58:5b:69:00:00:02; got ${JSON.stringify(value.slice(0, 40))}`);
  return value.toLowerCase().replace(/-/g, ':');
}

/** Who the simulated device is: its MAC (default device 1's) and name; the serial number follows the MAC. */
export interface SimulatedIdentity {
  mac?: string;
  name?: string;
}

export function initialState(identity: SimulatedIdentity = {}): SimulatorState {
  const mac = identity.mac === undefined ? simulatorMac(1) : checkMac(identity.mac);
  const device: SimulatedDeviceInfo = {
    deviceName: identity.name ?? 'Simulated IPC',
    model: 'SIM-IPC-2MP',
    brand: 'ipcam-simulator',
    firmwareVersion: '5.1.2.0-sim',
    hardwareVersion: 'V1.0',
    mac,
    // SIM and the MAC's device part in ten digits: device 1 is SIM0000000001.
    sn: `SIM${String(parseInt(mac.slice(9).replace(/:/g, ''), 16)).padStart(10, '0')}`,
  };
  const params = new Map<string, string>([
    ['Brand.Brand', device.brand],
    ['Brand.ProdFullName', device.model],
    ['Brand.ProdShortName', device.model],
    ['Brand.ProdNbr', device.deviceName],
    ['Properties.Firmware.Version', device.firmwareVersion],
    ['Properties.System.SerialNumber', device.sn],
    ['Properties.API.HTTP.Version', '3'],
    ['Network.eth0.MACAddress', device.mac],
    ['Network.eth0.IPAddress', '127.0.0.1'],
    ['Network.HostName', 'ipcam-sim'],
    ['Image.I0.Appearance.Resolution', '640x360'],
    ['Image.I0.Appearance.Compression', '30'],
    ['Image.I0.Text.String', ''],
    ['Motion.M0.Name', 'Door'],
    ['Motion.M0.Sensitivity', '80'],
    ['Motion.M0.Threshold', '40'],
    ['Motion.M1.Name', 'Gate'],
    ['Motion.M1.Sensitivity', '70'],
    ['Motion.M1.Threshold', '50'],
    ['IOPort.I0.Input.Name', 'Input 1'],
    ['IOPort.I1.Input.Name', 'Input 2'],
    ['IOPort.O0.Output.Name', 'Relay 1'],
    ['IOPort.O1.Output.Name', 'Relay 2'],
  ]);
  return { device, params, requests: [], requestCount: 0, faults: [], plates: new PlateDb(), vehicle: initialVehicleSettings(), httpPost: undefined, io: new SimulatedIo(), ptz: new SimulatedPtz(),
    answer: { http10: false, halfOpen: false, latin1: false, spacedParams: false, refuseRelay: false, refusePtz: false, refuseCheck: false, refuseStream: false },
    equipment: new SimulatedEquipment(),
    files: new SimulatedFiles(),
    certificates: new SimulatedCertificates(),
    maintenance: new SimulatedMaintenance(params),
    serveTests: new SimulatedServeTests(),
    media: new SimulatedMedia(),
    records: new SimulatedRecords(),
    account: { username: 'admin', password: 'admin' },
    alarms: new SimulatedAlarms(),
  };
}
