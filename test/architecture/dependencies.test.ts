import { cruise, type ICruiseResult, type IViolation } from 'dependency-cruiser'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import t from 'tap'
import { projectRoot } from '../../core/config/paths.js'

/**
 * The layers' dependency rules (.dependency-cruiser.cjs, docs/architecture.md):
 * no cycles; core/ imports neither Fastify nor the layers above it;
 * content types and shared schemas import only core/, schemas/ and TypeBox;
 * plugins/ never import the composition roots.
 */
const { forbidden, options } = createRequire(import.meta.url)(join(projectRoot, '.dependency-cruiser.cjs')) as { forbidden: unknown[], options: Record<string, unknown> }

async function violations (dirs: string[], baseDir = projectRoot): Promise<IViolation[]> {
  const tsConfig = { fileName: join(baseDir, 'tsconfig.build.json') }
  const { output } = await cruise(dirs, { ...options, tsConfig, ruleSet: { forbidden }, validate: true, baseDir } as never)
  return (output as ICruiseResult).summary.violations
}

const describe = (v: IViolation): string => `${v.rule.name}: ${v.from} → ${v.to}${v.cycle !== undefined ? ` (${v.cycle.map(c => c.name).join(' → ')})` : ''}`

t.test('the project keeps its layers', async t => {
  const found = await violations(['app', 'core', 'plugins', 'content-types', 'schemas'])
  t.same(found.map(describe), [], 'no dependency violations')
})

t.test('each rule fires on the mistake it exists for', async t => {
  // A miniature project in the project's own layout, one mistake per rule.
  // Outside the project: its own test/ folder is excluded from the rules.
  const dir = await mkdtemp(join(tmpdir(), 'layers-'))
  t.teardown(async () => { await rm(dir, { recursive: true, force: true }) })
  const files: Record<string, string> = {
    'core/a.ts': "import { b } from './b.js'\nimport Fastify from 'fastify'\nexport const a = (): unknown => [b, Fastify]\n",
    'core/b.ts': "import { a } from './a.js'\nimport { route } from '../plugins/route.js'\nexport const b = (): unknown => [a, route]\n",
    'plugins/route.ts': "import { root } from '../app/root.js'\nexport const route = root\n",
    'app/root.ts': 'export const root = 1\n',
    'content-types/x/index.ts': "import { route } from '../../plugins/route.js'\nexport default route\n",
    'schemas/s.ts': "import { root } from '../app/root.js'\nexport const s = root\n",
    // OpenTelemetry outside the SDK's module, and that module imported statically.
    'core/spans.ts': "import { trace } from '@opentelemetry/api'\nexport const spans = trace\n",
    'app/tracing-sdk.ts': 'export const sdk = 1\n',
    'app/boot.ts': "import { sdk } from './tracing-sdk.js'\nexport const boot = sdk\n",
    // One command's entry point imported by another.
    'app/cli.ts': 'export const progress = 1\n',
    'app/site-cli.ts': "import { progress } from './cli.js'\nexport const site = progress\n",
    // The rules resolve imports as the project does (`./b.js` is b.ts).
    'tsconfig.build.json': JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext' } })
  }
  for (const [path, text] of Object.entries(files)) {
    await mkdir(join(dir, path, '..'), { recursive: true })
    await writeFile(join(dir, path), text)
  }
  const rules = new Set((await violations(['app', 'core', 'plugins', 'content-types', 'schemas'], dir)).map(v => v.rule.name))
  t.same([...rules].sort(), ['content-types-declare', 'core-is-the-domain', 'entry-points-stand-alone', 'no-circular', 'opentelemetry-only-when-tracing', 'plugins-below-the-roots', 'schemas-build-on-core', 'tracing-sdk-loaded-on-demand'])
})
