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
 * (docs/performance.md, "Start-up"), most of it for schemas a process may
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

  /** `schemaController.compilersFactory.buildSerializer`. */
  readonly buildSerializer = (externalSchemas: unknown, options: Parameters<BuildSerializer>[1]): ReturnType<BuildSerializer> => {
    const compile = this.fastJsonStringify(externalSchemas, options)
    return route => {
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
