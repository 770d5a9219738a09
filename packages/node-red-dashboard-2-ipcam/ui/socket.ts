/**
 * The widget's side of its link to its node (see nodes/ui-dashboard.ts): Dashboard 2
 * `widget-action`s carrying `{ ipcam: { kind, ... } }` tell the node when it shows (`watch`,
 * again after every reconnection) and stops showing (`unwatch`) and what the user did; the node
 * answers on `ipcam-ui:<id>`.
 */
export interface DashboardSocket {
  connected?: boolean;
  emit(event: string, ...args: unknown[]): unknown;
  on(event: string, listener: (...args: never[]) => void): unknown;
  off(event: string, listener: (...args: never[]) => void): unknown;
}


export interface WidgetLink {
  send(msg: Record<string, unknown>): void;
  close(): void;
}

export function linkWidget<T>(socket: DashboardSocket, id: string, onData: (data: T) => void): WidgetLink {
  const send = (msg: Record<string, unknown>): void => void socket.emit('widget-action', id, { ipcam: msg });
  const watch = (): void => send({ kind: 'watch' });
  const data = (value: T): void => onData(value);
  socket.on(`ipcam-ui:${id}`, data);
  socket.on('connect', watch);
  watch();
  return {
    send,
    close() {
      send({ kind: 'unwatch' });
      socket.off(`ipcam-ui:${id}`, data);
      socket.off('connect', watch);
    },
  };
}

export const LIST_LABELS: Record<string, string> = {
  whiteList: 'allow list',
  blackList: 'block list',
  temporaryList: 'temporary list',
  strangerList: 'stranger list',
  unknown: 'no list',
};

export interface PlateRow {
  id?: number;
  time: string;
  plate: string;
  listType: string;
  camera: string;
  crop?: string;
}

/** `HH:MM:SS` of an ISO time, in the browser's time zone. */
export function clock(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleTimeString([], { hour12: false });
}
