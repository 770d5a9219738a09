import type { DeviceHealth } from '../lib/health/device-health';
import type { DeviceClient } from '../lib/transport/client';
import type { Node } from './red';

export interface DeviceCredentials {
  username: string;
  password: string;
}

/** What action and stream nodes get from their `device` setting. */
export interface DeviceConfigNode extends Node<DeviceCredentials> {
  /** The device's client; throws the `EINPUT` error of a bad setting (nothing is sent then). */
  getClient(): DeviceClient;
  /** The host setting as entered (event filters match senders against it). */
  host: string;
  /**
   * Registers a node that uses the client; the node calls the returned function from its own
   * close handler with its close work, which the client outlives.
   */
  registerUser(userId: string): (settled: Promise<unknown>) => void;
  /** What is known of the device's reachability (online, offline, auth-failed, unknown). */
  health: DeviceHealth;
  /** The heartbeat (ms, 0 = off): when on, it probes the device while it is offline. */
  heartbeat: number;
  /** True once the device node has begun to close (a redeploy): it takes no new `msg.device` requests. */
  isClosing(): boolean;
}
