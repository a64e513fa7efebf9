// Types of bench/crowd.mjs for the TypeScript tests that use it.

export const PACED_USERS: number
export function arrivalGap (uniform: number, rate: number): number
