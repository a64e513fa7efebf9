// Types of bench/traffic-mix.mjs for the TypeScript tests that use it.

export interface Talk { path: string, owner: string, published: boolean }
export interface Callers { admin: string, members: Array<{ login: string, token: string }>, managers: string[] }
export interface World extends Callers { talks: Talk[], effective: [number, number] }

export interface DrawnRequest {
  classId: string
  method: 'GET' | 'POST' | 'PATCH'
  path: string
  headers: Record<string, string>
  body?: string
  /** The statuses that count as this class's answers. */
  expect: number[]
  /** A transition's talk (its index in the world) and the state it takes it to. */
  transition?: { index: number, published: boolean }
}

export interface TrafficClass {
  id: string
  title: string
  kind: 'read' | 'write'
  loggedIn?: boolean
  /** A percentage of all requests. */
  weight: number
}

export const PAGE_SIZE: number
export const FIRST_PAGES: number
export const SORTS: string[]
export const ORDERS: string[]
export const MANAGERS_SHARE: number
export const WORKFLOW_EVERY: number
export const FULL_TEXT_FORMS: Array<{ form: string, share: number }>
export const WRITES: Array<{ id: string, title: string, share: number }>
export const MIX: TrafficClass[]
export function inWorkflowPool (index: number): boolean
export function classesOf (ids?: string[]): TrafficClass[]
export function createDrawer (options: { seed: number, world: World, classes?: TrafficClass[], loop?: number, loops?: number, label?: string }): {
  next: () => DrawnRequest
  answered: (request: DrawnRequest, asExpected: boolean) => void
}
export function clientSeed (runSeed: number, job: number, loop: number): number
