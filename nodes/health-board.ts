import { HealthBoard } from '../lib/health/board';

/** The devices of this Node-RED and their health: device nodes add themselves, device-status nodes watch. */
export const healthBoard = new HealthBoard();
