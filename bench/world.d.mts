// Types of bench/world.mjs for the TypeScript tests that use it.
import type { Callers, World } from './traffic-mix.mjs'

export function loadWorld (databaseUrl: string, callers: Callers): Promise<World>
