/** The one error type of the library; `code` tells a flow what went wrong without parsing text. */
export type IpcamErrorCode =
  | 'EINPUT' // rejected before any request was sent
  | 'EAUTH' // 401, wrong credentials, locked account
  | 'ETIMEOUT'
  | 'ECONN'
  | 'EHTTP' // any other non-2xx
  | 'EDEVICE' // the device answered with an error document or application error
  | 'EPARSE'; // the answer could not be read

export interface IpcamErrorDetails {
  status?: number;
  deviceCode?: number;
  deviceDesc?: string;
  /**
   * The reason in a few words for a status (`key 'stat'`), where the message is longer than a
   * status holds; never part of `msg.error`.
   */
  brief?: string;
  cause?: unknown;
}

export class IpcamError extends Error {
  readonly code: IpcamErrorCode;
  readonly status?: number;
  readonly deviceCode?: number;
  readonly deviceDesc?: string;
  readonly brief?: string;

  constructor(code: IpcamErrorCode, message: string, details: IpcamErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'IpcamError';
    this.code = code;
    if (details.status !== undefined) this.status = details.status;
    if (details.deviceCode !== undefined) this.deviceCode = details.deviceCode;
    if (details.deviceDesc !== undefined) this.deviceDesc = details.deviceDesc;
    if (details.brief !== undefined) this.brief = details.brief;
  }

  /** The shape flows see as `msg.error` (no stack, no cause: nothing that could carry a secret). */
  toJSON(): { message: string; code: IpcamErrorCode; status?: number; deviceCode?: number; deviceDesc?: string } {
    return {
      message: this.message,
      code: this.code,
      ...(this.status !== undefined && { status: this.status }),
      ...(this.deviceCode !== undefined && { deviceCode: this.deviceCode }),
      ...(this.deviceDesc !== undefined && { deviceDesc: this.deviceDesc }),
    };
  }
}

export function inputError(message: string, brief?: string): IpcamError {
  return new IpcamError('EINPUT', message, brief === undefined ? {} : { brief });
}

export function isIpcamError(err: unknown): err is IpcamError {
  return err instanceof IpcamError;
}
