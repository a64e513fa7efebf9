import AjvCompiler from '@fastify/ajv-compiler'
import SerializerSelector from '@fastify/fast-json-stringify-compiler'

type BuildValidator = ReturnType<typeof AjvCompiler>
type ValidatorCompiler = ReturnType<BuildValidator>
type Validate = ReturnType<ValidatorCompiler>
type BuildSerializer = ReturnType<typeof SerializerSelector>

/**
 * Fastify's own compilers (Ajv for request schemas, fast-json-stringify for
 * response schemas), compiling each schema when it is first used instead of
 * at start. Compiling every route's schemas took about a third of a start
 * (docs/performance-history.md, "Start-up"), most of it for schemas a process may
 * never use, or not soon: one serializer per error status of every route, a
 * HEAD twin of every GET route. The first request that needs a schema pays for
 * it (a few milliseconds); memory holds only the compiled functions in use.
 * `compilePending()` compiles the rest at once (the tests do, so that a schema
 * that does not compile fails there).
 *
 * What Fastify reads of a compiled function it reads through the wrapper: a
 * validator's `errors` after a call, and its `schemaEnv` (which makes Fastify
 * pass the parent object, so that Ajv can replace a root value) before it.
 */
export class LazySchemaCompilers {
  private readonly pending = new Set<() => unknown>()
  private readonly ajv = AjvCompiler()
  private readonly fastJsonStringify = SerializerSelector()

  /** `schemaController.compilersFactory.buildValidator`: Ajv and its shared schemas are built at the first compilation too. */
  readonly buildValidator = (externalSchemas: Parameters<BuildValidator>[0], options: Parameters<BuildValidator>[1]): ValidatorCompiler => {
    let compiler: ValidatorCompiler | undefined
    return route => {
      // With a custom validator compiler Fastify passes header schemas unchanged, without
      // lower-casing their property names as it does for its own: refuse them rather than
      // validate headers that never match. The service declares none.
      if ((route as { httpPart?: string }).httpPart === 'headers') throw new Error('header schemas are not supported by the lazy validator compiler (plugins/support/schema-compilers.ts)')
      return this.lazyValidator(() => (compiler ??= this.ajv(externalSchemas, options))(route))
    }
  }

  /**
   * `schemaController.compilersFactory.buildSerializer`: JSON.stringify for a
   * response schema that leaves out nothing (`writesEverything`), which is
   * then only the answer's documentation; fast-json-stringify for the rest,
   * which drops what they do not declare (the error shape's).
   */
  readonly buildSerializer = (externalSchemas: unknown, options: Parameters<BuildSerializer>[1]): ReturnType<BuildSerializer> => {
    const compile = this.fastJsonStringify(externalSchemas, options)
    return route => {
      if (writesEverything((route as { schema?: unknown }).schema)) return JSON.stringify
      const compiled = this.once(() => compile(route))
      return document => compiled()(document)
    }
  }

  /** Compiles every schema not compiled yet, yielding to the event loop between two; answers how many it compiled. */
  async compilePending (): Promise<number> {
    let count = 0
    for (const compile of this.pending) {
      await new Promise(resolve => setImmediate(resolve))
      compile()
      count++
    }
    return count
  }

  private lazyValidator (compile: () => Validate): Validate {
    const compiled = this.once(compile)
    const validate = ((data: unknown, context?: unknown) => (compiled() as (data: unknown, context?: unknown) => unknown)(data, context)) as Validate
    Object.defineProperties(validate, {
      errors: { get: () => compiled().errors },
      schemaEnv: { get: () => (compiled() as { schemaEnv?: unknown }).schemaEnv }
    })
    return validate
  }

  /** `compile` run at most once, when first needed (here or by compilePending). */
  private once<T> (compile: () => T): () => T {
    let result: { value: T } | undefined
    const run = (): T => {
      if (result === undefined) {
        result = { value: compile() }
        this.pending.delete(run)
      }
      return result.value
    }
    this.pending.add(run)
    return run
  }
}

/** The pattern of TypeBox's `Record(String, …)`: any name (fast-json-stringify tests names against it). */
const ANY_NAME = '^.*$'

/**
 * Whether fast-json-stringify writes every property of a value this schema
 * describes: every object in it open (`additionalProperties: true`, or a
 * record of any name), no reference, no alternatives. For the values the
 * service builds it then writes what JSON.stringify writes, twice as slowly
 * (an object of 2.5 kB: 12 µs against 6): an object's GET and a search's page
 * are such answers.
 */
export function writesEverything (schema: unknown): boolean {
  if (schema === true) return true
  if (typeof schema !== 'object' || schema === null) return false
  const s = schema as Record<string, unknown>
  if (['$ref', 'anyOf', 'oneOf', 'allOf', 'not', 'if'].some(key => key in s)) return false
  if (s.type === 'array') return s.items === undefined || writesEverything(s.items)
  if (s.type !== 'object' && s.properties === undefined && s.patternProperties === undefined) return true
  const properties = Object.values((s.properties ?? {}) as Record<string, unknown>)
  const patterns = Object.entries((s.patternProperties ?? {}) as Record<string, unknown>)
  const anyName = patterns.length === 1 && patterns[0][0] === ANY_NAME && properties.length === 0
  return (s.additionalProperties === true || anyName) &&
    properties.every(writesEverything) && patterns.every(([, value]) => writesEverything(value))
}
