import type { VocabularyTerm } from './content-type.js'
import type { Db } from './db.js'
import type { ContentTypeRegistry } from './registry.js'

/**
 * Named vocabularies declared by the content types. Editable ones (rooms)
 * keep the Managers' version in the settings table.
 */
export class Vocabularies {
  constructor (private readonly db: Db, private readonly types: ContentTypeRegistry) {}

  names (): string[] { return [...this.types.vocabularies.keys()] }

  has (name: string): boolean { return this.types.vocabularies.has(name) }

  async terms (name: string): Promise<readonly VocabularyTerm[]> {
    const declaration = this.types.vocabularies.get(name)
    if (declaration === undefined) return []
    if (declaration.editable !== true) return declaration.terms
    const { rows } = await this.db.query<{ value: VocabularyTerm[] }>('SELECT value FROM settings WHERE key = $1', [`vocabulary:${name}`])
    return rows[0]?.value ?? declaration.terms
  }

  async tokens (name: string): Promise<string[]> {
    return (await this.terms(name)).map(t => t.token)
  }

  async replace (name: string, terms: VocabularyTerm[]): Promise<void> {
    await this.db.query(`INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`,
      [`vocabulary:${name}`, JSON.stringify(terms)])
  }
}
