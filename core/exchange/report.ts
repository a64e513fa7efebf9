import type { ApiError } from '../errors.js'

/** Examples kept of each kind of problem: a report stays small whatever an export holds. */
const MAX_EXAMPLES = 5

/** One kind of problem of an export: how many objects (or files) it met, a few of them, and why it matters. */
export interface ProblemSummary { kind: string, count: number, examples: string[], why: string }

/**
 * What an import read, wrote and left out, for the operator: counts, and for
 * each kind of problem its count, a few examples and why. Nothing is left
 * out silently: every object the export holds is either imported or counted here.
 */
export class ExchangeReport {
  readonly counts: Record<string, number> = {}
  private readonly problems = new Map<string, ProblemSummary>()

  count (what: string, n = 1): void {
    this.counts[what] = (this.counts[what] ?? 0) + n
  }

  problem (kind: string, example: string, why: string): void {
    let summary = this.problems.get(kind)
    if (summary === undefined) {
      summary = { kind, count: 0, examples: [], why }
      this.problems.set(kind, summary)
    }
    summary.count++
    if (summary.examples.length < MAX_EXAMPLES) summary.examples.push(example.slice(0, 300))
  }

  /** Problems that stop the whole import before anything is written (the export itself cannot be read). */
  get fatal (): boolean {
    return this.problems.has('unreadable export')
  }

  has (kind: string): boolean {
    return this.problems.has(kind)
  }

  toJSON (): { counts: Record<string, number>, problems: ProblemSummary[] } {
    return { counts: { ...this.counts }, problems: [...this.problems.values()].sort((a, b) => a.kind.localeCompare(b.kind)) }
  }

  /** Lines for a terminal. */
  lines (): string[] {
    const { counts, problems } = this.toJSON()
    return [
      ...Object.entries(counts).map(([what, n]) => `${what}: ${n}`),
      ...problems.map(p => `${p.kind}: ${p.count} (${p.why}) e.g. ${p.examples.join(', ')}`)
    ]
  }
}

/** Why the service refused what an export holds: an API error's message and its fields'. */
export const refusal = (err: ApiError): string => [err.message, ...(err.errors ?? []).map(e => `${e.field ?? ''}: ${e.message}`)].join(' ')
