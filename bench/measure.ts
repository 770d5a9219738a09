/** Credentials of the simulators the benches start. */
export const USER = 'admin';
export const PASSWORD = 'bench-password';
