import type { VocabularyTerm } from './declaration.js'
import type { Db, Queryable } from '../db/db.js'
import type { ContentTypeRegistry } from './registry.js'

/** Plone's vocabulary of the tags in use (the `Subject` index), offered as suggestions for `subjects`. */
export const KEYWORDS_VOCABULARY = 'plone.app.vocabularies.Keywords'

/**
 * Named vocabularies declared by the content types. Editable ones (rooms)
 * keep the Managers' version in the settings table.
 */
export class Vocabularies {
  constructor (private readonly db: Db, private readonly types: ContentTypeRegistry) {}

  names (): string[] { return [...this.types.vocabularies.keys()] }

  has (name: string): boolean { return this.types.vocabularies.has(name) }

  /** `q`: a transaction to read in (a write that holds locks must not wait for a second connection). */
  async terms (name: string, q: Queryable = this.db): Promise<readonly VocabularyTerm[]> {
    const declaration = this.types.vocabularies.get(name)
    if (declaration === undefined) return []
    if (declaration.editable !== true) return declaration.terms
    const { rows } = await q.query<{ value: VocabularyTerm[] }>('SELECT value FROM settings WHERE key = $1', [`vocabulary:${name}`])
    return rows[0]?.value ?? declaration.terms
  }

  async tokens (name: string, q?: Queryable): Promise<string[]> {
    return (await this.terms(name, q)).map(t => t.token)
  }

  async replace (name: string, terms: VocabularyTerm[]): Promise<void> {
    await this.db.query('INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value',
      [`vocabulary:${name}`, JSON.stringify(terms)])
  }
}
