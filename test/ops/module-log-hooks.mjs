// The loader hooks of test/ops/module-log.mjs (they run on the loader's own thread).
import { appendFileSync } from 'node:fs'

let file

export function initialize (data) {
  file = data.file
}

export async function resolve (specifier, context, next) {
  const resolved = await next(specifier, context)
  appendFileSync(file, resolved.url + '\n')
  return resolved
}
