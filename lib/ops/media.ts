/** Operations of this spec section (to be filled in). */
import type { Operation } from './types';

export const MEDIA_OPERATIONS: readonly Operation[] = [];
