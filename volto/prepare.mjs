#!/usr/bin/env node
// Installs and builds the Volto 18 project in front of the service (volto/, `npm run volto`; the
// browser suite drives it),
// each only when its inputs changed since the last time: `npm ci` when its package.json,
// lock file or .npmrc changed, a production build when anything it compiles changed
// (the project, its catalogues, the lock file, the talk view add-on in content-types/talk/volto).
// The stamps live inside what they describe (node_modules/, build/), which git ignores,
// so a fresh clone installs and builds once and later runs cost a hash.
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const root = join(here, '..')
export const voltoApp = here
const addon = join(root, 'content-types', 'talk', 'volto')

/** What the build writes among its inputs: the merged catalogues (locales/<lang>.json). */
const generated = (path) => dirname(path) === join(voltoApp, 'locales') && path.endsWith('.json')

/** Every file under `dir` (sorted, without node_modules, build/ and generated files), for hashing. */
function filesUnder (dir) {
  if (!existsSync(dir) || generated(dir)) return []
  if (statSync(dir).isFile()) return [dir]
  return readdirSync(dir).sort()
    .filter(name => name !== 'node_modules' && name !== 'build')
    .flatMap(name => filesUnder(join(dir, name)))
}

function hashOf (paths) {
  const hash = createHash('sha256')
  for (const file of paths.flatMap(filesUnder)) {
    hash.update(relative(root, file)).update('\0').update(readFileSync(file)).update('\0')
  }
  return hash.digest('hex')
}

function stale (stampFile, hash) {
  return !existsSync(stampFile) || readFileSync(stampFile, 'utf8') !== hash
}

function run (command, args) {
  const started = Date.now()
  execFileSync(command, args, { cwd: voltoApp, stdio: 'inherit', env: { ...process.env, CI: 'true' } })
  return Math.round((Date.now() - started) / 1000)
}

const installInputs = ['package.json', 'package-lock.json', '.npmrc'].map(name => join(voltoApp, name))
const installHash = hashOf(installInputs)
const installStamp = join(voltoApp, 'node_modules', '.talks-install-hash')
if (stale(installStamp, installHash)) {
  console.log('volto: npm ci (Volto 18 from the npm registry) …')
  const seconds = run('npm', ['ci', '--no-audit', '--no-fund'])
  writeFileSync(installStamp, installHash)
  console.log(`volto: installed in ${seconds} s`)
}

const buildHash = hashOf([...installInputs, ...['razzle.config.js', 'babel.config.js', 'src', 'public', 'locales'].map(name => join(voltoApp, name)), addon])
const buildStamp = join(voltoApp, 'build', '.talks-inputs-hash')
if (stale(buildStamp, buildHash) || !existsSync(join(voltoApp, 'build', 'server.js'))) {
  console.log('volto: production build …')
  const seconds = run(join(voltoApp, 'node_modules', '.bin', 'razzle'), ['build', '--noninteractive'])
  writeFileSync(buildStamp, buildHash)
  console.log(`volto: built in ${seconds} s`)
}
