/** Operations of this spec section (to be filled in). */
import type { Operation } from './types';

export const MAINTENANCE_OPERATIONS: readonly Operation[] = [];
