import type { DeviceHealth, HealthChange } from './device-health';

/** One watched device: who it is and its health. */
export interface WatchedDevice {
  id: string;
  name: string;
  host: string;
  health: DeviceHealth;
  /** Asks the device's heartbeat for a first read now (someone watches its state). */
  wanted(): void;
}

export interface BoardListener {
  /** A device's state changed. */
  changed(device: WatchedDevice, change: HealthChange): void;
  /** A device started (a deploy): its state is `unknown` until something is learnt. */
  added?(device: WatchedDevice): void;
}

/**
 * The devices of one runtime and their health, by id: a watcher (a device-status node) follows a
 * device through redeploys, where the device node and its health are made anew.
 */
export class HealthBoard {
  private readonly devices = new Map<string, { device: WatchedDevice; unsubscribe: () => void }>();
  private readonly listeners = new Set<BoardListener>();

  add(device: WatchedDevice): void {
    this.devices.get(device.id)?.unsubscribe();
    const unsubscribe = device.health.subscribe((change) => {
      for (const listener of [...this.listeners]) listener.changed(device, change);
    });
    this.devices.set(device.id, { device, unsubscribe });
    for (const listener of [...this.listeners]) listener.added?.(device);
  }

  /** Removes the device, if that health is still the one on the board (a newer one may have replaced it). */
  remove(id: string, health: DeviceHealth): void {
    const entry = this.devices.get(id);
    if (!entry || entry.device.health !== health) return;
    entry.unsubscribe();
    this.devices.delete(id);
  }

  get(id: string): WatchedDevice | undefined {
    return this.devices.get(id)?.device;
  }

  list(): WatchedDevice[] {
    return [...this.devices.values()].map((e) => e.device);
  }

  subscribe(listener: BoardListener): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }
}
