import { existsSync } from 'node:fs'
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { Compile, type Validator } from 'typebox/compile'
import type { ContentTypeDeclaration, Field, Invariant, VocabularyDeclaration } from './declaration.js'
import { coreIndexes, type IndexDefinition } from '../catalog/indexes.js'
import { INDEX_KINDS } from '../query/index-kinds.js'
import { furtherOccurrences } from './recurrence.js'
import { siteRoot } from './site-root.js'
import { simplePublication, type Workflow } from '../security/workflow.js'

/** A content type as the rest of the service uses it: the declaration plus what is derived from it. */
export class ContentType {
  readonly name: string
  readonly title: string
  readonly folderish: boolean
  readonly workflow: Workflow | null
  /** Every field, behaviors' first, in declaration order. */
  readonly fields = new Map<string, Field>()
  readonly required = new Set<string>()
  readonly invariants: Invariant[] = []
  readonly searchableFields: string[] = []
  /** One compiled validator a field, so that errors name their field. */
  readonly validators = new Map<string, Validator>()

  constructor (readonly declaration: ContentTypeDeclaration) {
    this.name = declaration.name
    this.title = declaration.title
    this.folderish = declaration.folderish
    this.workflow = declaration.workflow === undefined ? simplePublication : declaration.workflow
    for (const part of [...declaration.behaviors.map(b => ({ schema: b.schema, invariants: b.invariants ?? [] })),
      { schema: declaration.schema, invariants: declaration.invariants ?? [] }]) {
      for (const name of part.schema.required ?? []) this.required.add(name)
      for (const [name, field] of Object.entries(part.schema.properties)) {
        if (this.fields.has(name)) throw new Error(`Content type '${this.name}': field '${name}' is declared twice`)
        this.fields.set(name, field as Field)
        if ((field as Field).searchable === true) this.searchableFields.push(name)
        this.validators.set(name, Compile(field as Field))
      }
      this.invariants.push(...part.invariants)
    }
  }

  get layout (): string { return this.declaration.layout ?? 'view' }
  get globalAllow (): boolean { return this.declaration.globalAllow ?? true }

  /** May an object of type `child` be added inside an object of this type? */
  allows (child: ContentType): boolean {
    if (!this.folderish) return false
    const allowed = this.declaration.allowedTypes
    return allowed === undefined ? child.globalAllow : allowed.includes(child.name)
  }
}

/**
 * All content types, loaded from the folders of `content-types/` (one folder a
 * type, its `index` module exporting the declaration), and everything that is
 * derived across types: the index list and the vocabularies.
 */
export class ContentTypeRegistry {
  readonly types = new Map<string, ContentType>()
  readonly indexes = new Map<string, IndexDefinition>()
  readonly vocabularies = new Map<string, VocabularyDeclaration>()
  private readonly fieldForIndex = new Map<string, Map<string, string>>()
  /** Per index of further occurrences: type name → the fields its recurring date is read from. */
  private readonly recurrenceOf = new Map<string, Map<string, { date: string, rule: string, anchor: string }>>()

  constructor (declarations: ContentTypeDeclaration[]) {
    for (const index of coreIndexes) this.indexes.set(index.name, index)
    for (const declaration of [siteRoot, ...declarations]) this.add(new ContentType(declaration))
  }

  get (name: string): ContentType | undefined { return this.types.get(name) }

  /** The type of the site root: not addable, not listed among the types. */
  get siteRoot (): ContentType { return this.types.get(siteRoot.name)! }

  private add (type: ContentType): void {
    if (this.types.has(type.name)) throw new Error(`Content type '${type.name}' is declared twice`)
    this.types.set(type.name, type)
    for (const [name, vocabulary] of Object.entries(type.declaration.vocabularies ?? {})) {
      const existing = this.vocabularies.get(name)
      if (existing !== undefined && existing !== vocabulary) throw new Error(`Vocabulary '${name}' is declared by two content types`)
      this.vocabularies.set(name, vocabulary)
    }
    for (const [fieldName, field] of type.fields) {
      if (field.index === undefined) continue
      this.addFieldIndex(type, fieldName, field)
    }
    for (const [fieldName, field] of type.fields) {
      for (const date of field.recurs?.dates ?? []) this.addOccurrences(type, date, fieldName, field.recurs!.anchor)
    }
    for (const [fieldName, field] of type.fields) {
      if (field.vocabulary !== undefined && !this.vocabularies.has(field.vocabulary)) {
        throw new Error(`Content type '${type.name}': field '${fieldName}' names the unknown vocabulary '${field.vocabulary}'`)
      }
    }
  }

  private addFieldIndex (type: ContentType, fieldName: string, field: Field): void {
    const kind = field.index!
    const name = field.indexName ?? fieldName
    const existing = this.indexes.get(name)
    if (existing !== undefined) {
      if (existing.declaredBy.includes('core')) throw new Error(`Content type '${type.name}': index '${name}' is a core index`)
      if (existing.kind !== kind) throw new Error(`Index '${name}' is declared as '${existing.kind}' and as '${kind}' (type '${type.name}')`)
      // Several types may share an index: each one fills it from its own field.
      existing.declaredBy.push(type.name)
      this.fieldForIndex.get(name)!.set(type.name, fieldName)
      return
    }
    // The field an index reads can differ per type: type name → field name.
    const fieldOf = new Map<string, string>([[type.name, fieldName]])
    const definition: IndexDefinition = {
      name,
      kind,
      multiValued: INDEX_KINDS[kind].multiValued,
      indexed: true,
      metadata: field.metadata ?? true,
      sortable: INDEX_KINDS[kind].sortable,
      declaredBy: [type.name],
      value: o => {
        const source = fieldOf.get(o.portal_type)
        if (source === undefined) return null
        const value = o.data[source]
        if (kind === 'keyword' && typeof value === 'string') return [value]
        return value ?? null
      }
    }
    this.indexes.set(name, definition)
    this.fieldForIndex.set(name, fieldOf)
  }

  /**
   * The index of a recurring date's further occurrences (`<index>_occurrences`,
   * kind `dates`), linked from the date's index; each type that declares the
   * date recurring fills it from its own rule, the others leave it empty.
   */
  private addOccurrences (type: ContentType, fieldName: string, rule: string, anchor: string): void {
    const field = type.fields.get(fieldName)
    if (field?.index !== 'date') throw new Error(`Content type '${type.name}': '${fieldName}' recurs by '${rule}' but is not a field with a date index`)
    if (!type.fields.has(anchor)) throw new Error(`Content type '${type.name}': '${rule}' recurs from the unknown field '${anchor}'`)
    const dateIndex = this.indexes.get(field.indexName ?? fieldName)!
    const existing = dateIndex.occurrences
    if (existing !== undefined) {
      existing.declaredBy.push(type.name)
      this.recurrenceOf.get(existing.name)!.set(type.name, { date: fieldName, rule, anchor })
      return
    }
    const name = `${dateIndex.name}_occurrences`
    if (this.indexes.has(name)) throw new Error(`Content type '${type.name}': index '${name}' is declared, and '${dateIndex.name}' recurs`)
    const recurrenceOf = new Map([[type.name, { date: fieldName, rule, anchor }]])
    const occurrences: IndexDefinition = {
      name,
      kind: 'dates',
      multiValued: true,
      indexed: true,
      metadata: false,
      sortable: false,
      declaredBy: [type.name],
      value: o => {
        const fields = recurrenceOf.get(o.portal_type)
        return fields === undefined ? null : furtherOccurrences(o.data[fields.rule], o.data[fields.anchor], o.data[fields.date])
      }
    }
    this.indexes.set(name, occurrences)
    this.recurrenceOf.set(name, recurrenceOf)
    dateIndex.occurrences = occurrences
  }

  static async load (dirs: string[]): Promise<ContentTypeRegistry> {
    const declarations: ContentTypeDeclaration[] = []
    for (const dir of dirs) {
      for (const entry of (await readdir(dir, { withFileTypes: true })).filter(e => e.isDirectory()).sort((a, b) => a.name.localeCompare(b.name))) {
        const module = ['index.js', 'index.ts'].map(f => join(dir, entry.name, f)).find(f => existsSync(f))
        if (module === undefined) continue
        const loaded = await import(pathToFileURL(module).href) as { default?: ContentTypeDeclaration }
        if (loaded.default === undefined) throw new Error(`${module} must export a content type declaration as default`)
        declarations.push(loaded.default)
      }
    }
    return new ContentTypeRegistry(declarations)
  }
}
