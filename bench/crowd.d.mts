// Types of bench/crowd.mjs for the TypeScript tests that use it.

export function arrivalGap (uniform: number, rate: number): number
