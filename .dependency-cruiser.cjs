/**
 * The dependency rules of the layers (docs/architecture.md), checked by
 * test/architecture/dependencies.test.ts in `npm test` and by `npm run deps`.
 *
 *   app/            composition roots: may use everything
 *   plugins/        the web layer (Fastify): may use core/ and schemas/
 *   content-types/  one folder a type: core/ and schemas/ only
 *   schemas/        shared TypeBox field sets: core/ only
 *   core/           the domain: no Fastify, nothing of the layers above
 */
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A cycle means two modules are one concern, or one of them is in the wrong place.',
      from: {},
      to: { circular: true }
    },
    {
      name: 'core-is-the-domain',
      severity: 'error',
      comment: 'core/ knows nothing of HTTP: Fastify lives in plugins/, composition in app/.',
      from: { path: '^core/' },
      to: { path: ['^(plugins|app|schemas|content-types)/', '(^|node_modules/)(fastify|@fastify/|fastify-plugin)'] }
    },
    {
      name: 'content-types-declare',
      severity: 'error',
      comment: 'A content type is a declaration: it builds on core/ and schemas/ (and TypeBox), nothing else.',
      from: { path: '^content-types/' },
      to: { pathNot: ['^(core|schemas)/', '^content-types/', '^typebox', 'node_modules/typebox'], dependencyTypesNot: ['core'] }
    },
    {
      name: 'schemas-build-on-core',
      severity: 'error',
      comment: 'Shared field sets are declarations too.',
      from: { path: '^schemas/' },
      to: { pathNot: ['^(core|schemas)/', '^typebox', 'node_modules/typebox'], dependencyTypesNot: ['core'] }
    },
    {
      name: 'plugins-below-the-roots',
      severity: 'error',
      comment: 'The composition roots assemble plugins, not the other way round.',
      from: { path: '^plugins/' },
      to: { path: ['^app/', '^content-types/'] }
    },
    {
      name: 'entry-points-stand-alone',
      severity: 'error',
      comment: 'A process\'s entry point runs its main only when Node started that file; one another module imports is bundled into a shared chunk (infra/bundle.mjs), where it never runs (npm run solr did nothing once). What they share goes in a module of its own.',
      from: {},
      to: { path: '^app/(server|worker|cli|site-cli)\\.ts$' }
    },
    {
      name: 'opentelemetry-only-when-tracing',
      severity: 'error',
      comment: 'OpenTelemetry (@opentelemetry/*, bullmq-otel) is imported by app/tracing-sdk.ts and the request spans it registers alone: the core records its spans through core/tracing.ts, which names no package (docs/operations.md, "Tracing").',
      from: { pathNot: ['^app/tracing-sdk\\.ts$', '^plugins/support/request-spans\\.ts$'] },
      to: { path: '(^|node_modules/)(@opentelemetry/|bullmq-otel)' }
    },
    {
      name: 'tracing-sdk-loaded-on-demand',
      severity: 'error',
      comment: 'A process that does not trace loads no SDK: app/tracing.ts imports app/tracing-sdk.ts dynamically, when tracing is on, and nothing else imports it or its request spans.',
      from: { pathNot: '^app/tracing-sdk\\.ts$' },
      to: { path: ['^app/tracing-sdk\\.ts$', '^plugins/support/request-spans\\.ts$'], dependencyTypesNot: ['dynamic-import'] }
    }
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Not node_modules: excluded modules vanish as dependencies too, and the rules must see Fastify.
    // A type's volto/ folder is a Volto add-on (a frontend package of its own, built by Volto), not service code.
    exclude: { path: ['^(dist|test|bench|infra|volto)/', '^content-types/[^/]+/volto/'] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.build.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'], conditionNames: ['import', 'require', 'node', 'default'] }
  }
}
