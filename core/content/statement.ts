/**
 * One SQL statement built from parts, with its parameters numbered as they
 * are added. A write of one object is one such statement (core/content/store.ts):
 * a data-modifying CTE named `changed` that returns the object's uid when it
 * changed something, and every other part reading from it, so that all of it
 * happens, atomically, or none (when `changed` returns nothing).
 */
export class Statement {
  readonly params: unknown[] = []
  private readonly parts: Array<[string, string]> = []

  /** A parameter's placeholder. */
  readonly p = (value: unknown): string => {
    this.params.push(value)
    return `$${this.params.length}`
  }

  /** A CTE; its name must be unique in the statement. */
  with (name: string, sql: string): this {
    this.parts.push([name, sql])
    return this
  }

  sql (final: string): string {
    return `WITH ${this.parts.map(([name, sql]) => `${name} AS (${sql})`).join(',\n')}\n${final}`
  }
}
