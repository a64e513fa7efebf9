/**
 * The heaviest frames of a V8 CPU profile (`node --cpu-prof`, or
 * `npm run bench -- --cpu-prof`): self time and inclusive time per function,
 * and self time per package, so that a slow scenario can be explained without a GUI.
 *
 *   node bench/top-frames.mjs <file.cpuprofile> [how many, default 25]
 */
import { readFileSync } from 'node:fs'
import { relative } from 'node:path'

const [file, limitArg] = process.argv.slice(2)
if (file === undefined) throw new Error('usage: node bench/top-frames.mjs <file.cpuprofile> [count]')
const limit = Number(limitArg ?? 25)
const { nodes, samples, timeDeltas } = JSON.parse(readFileSync(file, 'utf8'))

const byId = new Map(nodes.map(n => [n.id, n]))
const parentOf = new Map()
for (const node of nodes) for (const child of node.children ?? []) parentOf.set(child, node.id)

const label = ({ callFrame: f }) => {
  const where = f.url === '' ? '' : ` ${relative(process.cwd(), f.url.replace(/^file:\/\//, ''))}:${f.lineNumber + 1}`
  return `${f.functionName === '' ? '(anonymous)' : f.functionName}${where}`
}

// Each sample's time goes to its frame (self) and, once per function, to every caller (inclusive).
const self = new Map()
const inclusive = new Map()
const byPackage = new Map()
/** node_modules/<package>, node: internals, the service's own files, or V8 itself. */
const packageOf = ({ callFrame: { url } }) =>
  url.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/)?.[1] ?? (url.startsWith('node:') ? 'node: (core)' : url === '' ? '(V8 / native)' : 'the service')
let total = 0
samples.forEach((id, i) => {
  const ms = (timeDeltas[i] ?? 0) / 1000
  total += ms
  const own = label(byId.get(id))
  self.set(own, (self.get(own) ?? 0) + ms)
  if (own !== '(idle)') byPackage.set(packageOf(byId.get(id)), (byPackage.get(packageOf(byId.get(id))) ?? 0) + ms)
  const seen = new Set()
  for (let at = id; at !== undefined; at = parentOf.get(at)) {
    const name = label(byId.get(at))
    if (seen.has(name)) continue
    seen.add(name)
    inclusive.set(name, (inclusive.get(name) ?? 0) + ms)
  }
})

// Waiting for I/O is not work; everything else (GC and native code, `(program)`, included) is.
const idle = self.get('(idle)') ?? 0
const busy = total - idle
const table = (title, map) => {
  console.log(`\n${title}`)
  const rows = [...map].filter(([name]) => name !== '(idle)' && name !== '(root)').sort((a, b) => b[1] - a[1]).slice(0, limit)
  for (const [name, ms] of rows) console.log(`${ms.toFixed(0).padStart(8)} ms ${(ms / busy * 100).toFixed(1).padStart(5)} %  ${name}`)
}
console.log(`${file}: ${total.toFixed(0)} ms sampled, ${busy.toFixed(0)} ms busy (percentages are of busy time)`)
table('self time', self)
table('inclusive time', inclusive)
table('self time by package', byPackage)
