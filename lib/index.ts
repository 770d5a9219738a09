/** The protocol library: usable without Node-RED. */
export { IpcamError, type IpcamErrorCode } from './errors/errors';
export { DeviceClient, type ClientHooks, type DeviceResponse, type DeviceStream, type ExchangeOutcome, type RequestOptions, type StreamOptions } from './transport/client';
export type { DeviceOptions } from './transport/options';
export type { StreamBody, StreamSink } from './transport/stream-body';
export type { AuthMode } from './transport/auth';
export { buildCgiPath, parseKeyValues } from './cgi/codec';
export { listParams, updateParams, addParamGroup, removeParamGroup } from './ops/param-calls';
export { takeSnapshot, type Snapshot, type SnapshotRequest, type SnapshotSource } from './ops/snapshot';
export { parseXml, toTyped, buildDocument, xml, XML_NS, type XmlElement, type XmlValue } from './xml/codec';
export { xmlExchange as xmlCall } from './answer';
export { getDeviceInfo, identifyDevice, type DeviceIdentity, type XmlDeviceInfo } from './ops/device-info';
export { startSimulator, type Simulator, type SimulatorOptions } from './simulator';
