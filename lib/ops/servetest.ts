/** Operations of this spec section (to be filled in). */
import type { Operation } from './types';

export const SERVETEST_OPERATIONS: readonly Operation[] = [];
