import neostandard from 'neostandard'

/** Fastify's own style (neostandard), with TypeScript; generated and fetched code is not ours to lint. */
export default [
  ...neostandard({
    ts: true,
    ignores: ['dist/**', 'var/**', 'infra/solr-dev/**', 'bench/results/**', 'test/.tmp-*/**', 'volto/build/**']
  }),
  {
    rules: {
      // `void promise` marks a promise left to run on purpose (a reply's header, a shutdown on a signal).
      'no-void': ['error', { allowAsStatement: true }]
    }
  },
  {
    files: ['test/**'],
    rules: {
      // Tests wait in loops for conditions that concurrent clients of the same test change.
      'no-unmodified-loop-condition': 'off'
    }
  }
]
