/**
 * The widget's side of its link to its node (see nodes/ui-dashboard.ts). The component asks with
 * Dashboard 2 `widget-action`s, each one of the closed list of lib/widgets/actions: `watch` when it
 * shows (again after every reconnection and when its page becomes visible), `unwatch` when it stops
 * showing, and what the user did. The node answers on `msg-input:<id>` (Dashboard's documented
 * event) to the watching clients only; Dashboard's own empty `msg-input` of a wired message
 * carries nothing and is ignored.
 */
import type { ListType } from '../nodes/ui-plate-row';

export type { ListType, PlateRow, PlatesView, ShownPlateRow } from '../nodes/ui-plate-row';

export interface DashboardSocket {
  connected?: boolean;
  emit(event: string, ...args: unknown[]): unknown;
  on(event: string, listener: (...args: never[]) => void): unknown;
  off(event: string, listener: (...args: never[]) => void): unknown;
}

export interface WidgetLink {
  send(msg: Record<string, unknown>): void;
  watch(): void;
  unwatch(): void;
  close(): void;
}

export function linkWidget<T extends object>(socket: DashboardSocket, id: string, onData: (data: T) => void): WidgetLink {
  const send = (msg: Record<string, unknown>): void => void socket.emit('widget-action', id, msg);
  const watch = (): void => send({ action: 'watch' });
  const unwatch = (): void => send({ action: 'unwatch' });
  const data = (value: unknown): void => {
    if (typeof value === 'object' && value !== null && Object.keys(value).length > 0) onData(value as T);
  };
  socket.on(`msg-input:${id}`, data);
  socket.on('connect', watch);
  watch();
  return {
    send,
    watch,
    unwatch,
    close() {
      unwatch();
      socket.off(`msg-input:${id}`, data);
      socket.off('connect', watch);
    },
  };
}

export const LIST_LABELS: Readonly<Record<ListType, string>> = {
  whiteList: 'allow list',
  blackList: 'block list',
  temporaryList: 'temporary list',
  strangerList: 'stranger list',
  unknown: 'no list',
};

const two = (n: number): string => String(n).padStart(2, '0');

/**
 * The one time format of both widgets: `HH:MM:SS`, 24 hours, in the browser's time zone, of an
 * ISO time or ms since the epoch (whatever the browser's locale would write).
 */
export function clock(time: string | number): string {
  const date = new Date(time);
  if (Number.isNaN(date.getTime())) return typeof time === 'string' ? time.slice(0, 40) : '';
  return `${two(date.getHours())}:${two(date.getMinutes())}:${two(date.getSeconds())}`;
}
