import { checkWhole, int, optional } from '../input/params';

/**
 * Highest channel id sent in a path (`/PtzControl/<channel>/...`, `/GetSmartVehicleConfig/<channel>`):
 * the spec gives none; above the channel count of any recorder seen (128).
 */
export const MAX_CHANNEL = 256;

/** A channel id from 1 to `MAX_CHANNEL`, as a number or its digits; `EINPUT` otherwise. */
export function checkChannel(value: unknown): number {
  return checkWhole(value, 'Channel', 1, MAX_CHANNEL);
}

/** A node's Channel setting: blank leaves the device's default. */
export const CHANNEL_SETTING = optional(int({ min: 1, max: MAX_CHANNEL }));

/** `base` or `base/<channel>`: no channel given leaves the device's default (1). */
export function channelPath(base: string, channel: unknown): string {
  return channel === undefined || channel === null || channel === '' ? base : `${base}/${checkChannel(channel)}`;
}
