import type { Test } from 'tap'
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, rm } from 'node:fs/promises'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { chromium, type Page, type Response } from 'playwright-core'
import sharp from 'sharp'
import { projectRoot } from '../../core/config/paths.js'
import { ADMIN_PASSWORD, JWT_SECRET, freshDatabase } from '../helper.js'

/**
 * What every browser suite needs: the service and Volto 18 started as their operators start
 * them (`dist/app/server.js` on a fresh database; volto/run.mjs, the production build made by
 * volto/prepare.mjs — `npm test`'s pretest — behind its own proxy, which forwards `/++api++`
 * to the service with Zope's virtual hosting path), Chromium, and steps that each keep a
 * screenshot (test/browser/screenshots/<suite>/, CI's artefacts) and report what happened
 * behind the page: refused or failed API calls, writes and their answers, script errors.
 */

const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
/** Width of the images an editor uploads: wider than every scale Volto may ask for (huge is 1600). */
export const PHOTO_WIDTH = 2400
/** A photo of one colour, as an editor uploads one. */
export const photo = async (background: string): Promise<Buffer> =>
  await sharp({ create: { width: PHOTO_WIDTH, height: 1200, channels: 3, background } }).jpeg().toBuffer()
/** What Volto shows instead of a page when the API refused or failed. */
const ERROR_TEXTS = ['Server Error', 'Sorry, something went wrong', 'Forbidden', 'Unauthorized', 'Page not found', 'Connection refused']

async function freePort (): Promise<number> {
  return await new Promise(resolve => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

async function answers (url: string): Promise<boolean> {
  try {
    return (await fetch(url)).ok
  } catch {
    return false
  }
}

/** Spawns a process, keeps its output, and waits until `ready()` or fails with that output; stopped at the test's end. */
async function launch (t: Test, name: string, args: string[], env: Record<string, string>, ready: () => Promise<boolean>): Promise<void> {
  const child = spawn(process.execPath, args, { cwd: projectRoot, env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (chunk: Buffer) => { output += chunk.toString() })
  child.stderr.on('data', (chunk: Buffer) => { output += chunk.toString() })
  t.teardown(async () => {
    if (child.exitCode !== null) return
    const exited = new Promise(resolve => child.once('exit', resolve))
    child.kill('SIGTERM')
    await exited
  })
  const deadline = Date.now() + 60000
  while (!await ready()) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`${name} did not start: ${output}`)
    await new Promise(resolve => setTimeout(resolve, 250))
  }
}

export interface Site {
  /** The service's own address (the API, without Volto's proxy). */
  service: string
  /** Volto's address. */
  volto: string
  page: Page
  /** Headers of a JSON call to the service as admin. */
  auth: Record<string, string>
  /** One step of an editor's path: run it, screenshot the page, and check that no error page shows. */
  step: (name: string, body: (t: Test) => Promise<void>) => Promise<void>
  /** An object as the service keeps it, read as admin. */
  stored: (path: string) => Promise<Record<string, any>>
}

/** Starts the service on a fresh database, Volto in front of it and Chromium, for the suite `suite`. */
export async function openSite (t: Test, suite: string): Promise<Site> {
  t.ok(existsSync(chromiumPath), `Chromium at ${chromiumPath} (Debian's package "chromium"; .ci/run installs it)`)
  t.ok(existsSync(join(projectRoot, 'volto', 'build', 'server.js')), 'Volto is built (node volto/prepare.mjs, run by npm test)')
  const screenshots = join(projectRoot, 'test', 'browser', 'screenshots', suite)
  await rm(screenshots, { recursive: true, force: true })
  await mkdir(screenshots, { recursive: true })

  const service = `http://127.0.0.1:${await freePort()}`
  await launch(t, 'the service', [join(projectRoot, 'dist', 'app', 'server.js')],
    { PORT: new URL(service).port, HOST: '127.0.0.1', DATABASE_URL: await freshDatabase(t), ADMIN_PASSWORD, JWT_SECRET, LOG_LEVEL: 'warn' },
    async () => await answers(`${service}/@health`))
  const json = { accept: 'application/json', 'content-type': 'application/json' }
  const login = await fetch(`${service}/@login`, { method: 'POST', headers: json, body: JSON.stringify({ login: 'admin', password: ADMIN_PASSWORD }) })
  const { token } = await login.json() as { token: string }
  const auth = { ...json, authorization: `Bearer ${token}` }

  const volto = `http://127.0.0.1:${await freePort()}`
  // As `npm run volto` runs it: Volto's proxy forwards the browser's /++api++ calls to the service.
  await launch(t, 'Volto', [join(projectRoot, 'volto', 'run.mjs')], { SERVICE_URL: service, VOLTO_PORT: new URL(volto).port },
    async () => await answers(`${volto}/ok`))

  const browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox', '--disable-dev-shm-usage'] })
  t.teardown(async () => { await browser.close() })
  // In UTC, so that dates read the same on every machine.
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 }, timezoneId: 'UTC' })
  page.setDefaultTimeout(20000)

  let problems: string[] = []
  page.on('pageerror', error => problems.push(`page error: ${error.message}`))
  page.on('response', (response: Response) => {
    const method = response.request().method()
    if (response.url().includes('/++api++/') && (response.status() >= 400 || method !== 'GET')) {
      const line = `${method} ${response.url().replace(volto, '')} → ${response.status()}`
      problems.push(line)
      // What was sent and what the service answered (a write's, or a refused call's), for the report.
      const sent = method === 'GET' ? '' : ` sent ${(response.request().postData() ?? '').slice(0, 300)}`
      void response.text().then(body => { problems[problems.indexOf(line)] = `${line}${sent}, answered ${body.slice(0, 300)}` }, () => {})
    }
  })

  let stepNumber = 0
  const step = async (name: string, body: (t: Test) => Promise<void>): Promise<void> => {
    const file = `${String(++stepNumber).padStart(2, '0')}-${name.replace(/\W+/g, '-').toLowerCase()}.png`
    await t.test(name, async t => {
      problems = []
      try {
        await body(t)
        const text = await page.locator('body').innerText()
        for (const error of ERROR_TEXTS) t.notOk(text.includes(error), `no "${error}" on ${page.url()}`)
      } catch (error) {
        t.fail(`${name}: ${(error as Error).message.split('\n')[0]}`)
      } finally {
        await page.screenshot({ path: join(screenshots, file), fullPage: true }).catch(() => {})
        if (problems.length > 0) t.comment(`behind the page: ${problems.join('; ')}`)
        const toasts = await page.locator('.Toastify').innerText().catch(() => '')
        if (toasts.trim() !== '') t.comment(`notifications: ${toasts.replace(/\s+/g, ' ')}`)
      }
    })
  }
  const stored = async (path: string): Promise<Record<string, any>> => await (await fetch(`${service}${path}`, { headers: auth })).json() as Record<string, any>
  return { service, volto, page, auth, step, stored }
}

/** The page's main heading. */
export const heading = async (page: Page): Promise<string> => await page.locator('h1.documentFirstHeading').first().innerText()
export const pathOf = (page: Page): string => new URL(page.url()).pathname

/** Logs in through Volto's login form. */
export async function logIn (page: Page, volto: string, login: string, password: string): Promise<void> {
  await page.goto(`${volto}/login`)
  await page.locator('#login').fill(login)
  await page.locator('#password').fill(password)
  await page.locator('#login-form-submit').click()
  await page.locator('#toolbar-personal').waitFor()
}
