#!/usr/bin/env node
// Runs the built Volto 18 project (volto/, built by prepare.mjs) in
// front of the service, as Volto's operators run it: the browser talks to Volto only, whose
// proxy forwards `/++api++/…` to the service (with Zope's virtual hosting path, so that the
// service's @ids name Volto's address); server-side rendering calls the service directly.
//
//   SERVICE_URL  the service (default http://127.0.0.1:8080, `npm start`'s address)
//   VOLTO_HOST   interface Volto listens on (default 127.0.0.1)
//   VOLTO_PORT   Volto's port (default 3000)
//   VOLTO_URL    the address browsers use for Volto (default http://VOLTO_HOST:VOLTO_PORT)
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const voltoApp = dirname(fileURLToPath(import.meta.url))
const server = join(voltoApp, 'build', 'server.js')
if (!existsSync(server)) {
  console.error('Volto is not built: run node volto/prepare.mjs')
  process.exit(1)
}

const service = (process.env.SERVICE_URL ?? 'http://127.0.0.1:8080').replace(/\/+$/, '')
const host = process.env.VOLTO_HOST ?? '127.0.0.1'
const port = process.env.VOLTO_PORT ?? '3000'
const publicUrl = (process.env.VOLTO_URL ?? `http://${host}:${port}`).replace(/\/+$/, '')

Object.assign(process.env, {
  NODE_ENV: 'production',
  HOST: host,
  PORT: port,
  RAZZLE_API_PATH: publicUrl,
  RAZZLE_DEV_PROXY_API_PATH: service,
  RAZZLE_INTERNAL_API_PATH: service
})
// Volto's server finds its static files relative to the working directory.
process.chdir(voltoApp)
console.log(`Volto on ${publicUrl}, the service at ${service}`)
await import(pathToFileURL(server).href)
