import t, { type Test } from 'tap'
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, rm } from 'node:fs/promises'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { chromium, type Page, type Response } from 'playwright-core'
import { projectRoot } from '../../core/config/paths.js'
import { ADMIN_PASSWORD, JWT_SECRET, freshDatabase } from '../helper.js'

/**
 * Volto 18 (Plone's own frontend, from the npm registry) against the service, in Chromium, as an
 * editor uses it: browse, log in, add a lightning talk, edit it, publish it, find it, open folder
 * contents, add a page built of blocks, edit the home page, open the Solr control panel, log out. Volto runs as its operators run it (run-volto.mjs):
 * the production build (prepare-volto.mjs, run by `npm test`'s pretest) behind its own proxy, which
 * forwards `/++api++` to the service with Zope's virtual hosting path; server-side rendering calls
 * the service directly. A screenshot of every step is kept in test/browser/screenshots/.
 */
// Thirteen steps that each may wait 20 s when they fail: their report must arrive before tap's kill.
t.setTimeout(600000)

const voltoApp = join(projectRoot, 'test', 'browser', 'volto-app')
const screenshots = join(projectRoot, 'test', 'browser', 'screenshots')
const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
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

interface Running { child: ChildProcess, output: () => string }

/** Spawns a process, keeps its output, and waits until `ready(output)` or fails with that output. */
async function launch (name: string, args: string[], options: { cwd: string, env: Record<string, string> }, ready: () => Promise<boolean>): Promise<Running> {
  const child = spawn(process.execPath, args, { cwd: options.cwd, env: { PATH: process.env.PATH ?? '', ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout!.on('data', (chunk: Buffer) => { output += chunk.toString() })
  child.stderr!.on('data', (chunk: Buffer) => { output += chunk.toString() })
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
  return { child, output: () => output }
}

async function answers (url: string): Promise<boolean> {
  try {
    return (await fetch(url)).ok
  } catch {
    return false
  }
}

t.test('Volto 18 edits the talks in Chromium', async t => {
  t.ok(existsSync(chromiumPath), `Chromium at ${chromiumPath} (Debian's package "chromium"; .ci/run installs it)`)
  t.ok(existsSync(join(voltoApp, 'build', 'server.js')), 'Volto is built (node test/browser/prepare-volto.mjs, run by npm test)')
  await rm(screenshots, { recursive: true, force: true })
  await mkdir(screenshots, { recursive: true })

  const servicePort = await freePort()
  const service = `http://127.0.0.1:${servicePort}`
  await launch('the service', [join(projectRoot, 'dist', 'app', 'server.js')], {
    cwd: projectRoot,
    env: { PORT: String(servicePort), HOST: '127.0.0.1', DATABASE_URL: await freshDatabase(t), ADMIN_PASSWORD, JWT_SECRET, LOG_LEVEL: 'warn' }
  }, async () => await answers(`${service}/@health`))

  // A published talk without speaker and details: the add-on's view shows the first creator and the description.
  const json = { accept: 'application/json', 'content-type': 'application/json' }
  const login = await fetch(`${service}/@login`, { method: 'POST', headers: json, body: JSON.stringify({ login: 'admin', password: ADMIN_PASSWORD }) })
  const { token } = await login.json() as { token: string }
  const auth = { ...json, authorization: `Bearer ${token}` }
  const seeded = await fetch(`${service}/talks`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ '@type': 'talk', id: 'plone-meets-fastify', title: 'Plone meets Fastify', description: 'Volto in front of a Fastify service', type_of_talk: 'Talk', audience: ['Beginner'] })
  })
  t.equal(seeded.status, 201, 'a talk to browse')
  t.equal((await fetch(`${service}/talks/plone-meets-fastify/@workflow/publish`, { method: 'POST', headers: auth })).status, 200, 'published')

  const voltoPort = await freePort()
  const volto = `http://127.0.0.1:${voltoPort}`
  // As `npm run volto` runs it: Volto's proxy forwards the browser's /++api++ calls to the service.
  await launch('Volto', [join(projectRoot, 'test', 'browser', 'run-volto.mjs')], {
    cwd: projectRoot,
    env: { SERVICE_URL: service, VOLTO_PORT: String(voltoPort) }
  }, async () => await answers(`${volto}/ok`))

  const browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox', '--disable-dev-shm-usage'] })
  t.teardown(async () => { await browser.close() })
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
  page.setDefaultTimeout(20000)

  // What happened behind the page, reported with each step: refused or failed API calls, the
  // writes and their answers, errors of the page's scripts.
  let problems: string[] = []
  page.on('pageerror', error => problems.push(`page error: ${error.message}`))
  page.on('response', (response: Response) => {
    const method = response.request().method()
    if (response.url().includes('/++api++/') && (response.status() >= 400 || method !== 'GET')) {
      const line = `${method} ${response.url().replace(volto, '')} → ${response.status()}`
      problems.push(line)
      // What the service said of a refused call, for the report.
      if (response.status() >= 400) void response.text().then(body => { problems[problems.indexOf(line)] = `${line} ${body.slice(0, 300)}` }, () => {})
    }
  })

  let stepNumber = 0
  /** One step of the editor's path: run it, screenshot the page, and check no error page shows. */
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
  const heading = async (page: Page): Promise<string> => await page.locator('h1.documentFirstHeading').first().innerText()
  const pathOf = (page: Page): string => new URL(page.url()).pathname
  /** Brings a form field into view: Volto shows one fieldset (tab) at a time. */
  const showField = async (page: Page, id: string): Promise<void> => {
    const field = page.locator(`#field-${id}`)
    const tabs = page.locator('.formtabs .item')
    for (let i = 0; i < await tabs.count() && !await field.isVisible(); i++) await tabs.nth(i).click()
  }
  /** Picks an option of a Volto select (react-select) field. */
  const choose = async (page: Page, id: string, option: string): Promise<void> => {
    await showField(page, id)
    await page.locator(`#field-${id} .react-select__control`).click()
    await page.locator('.react-select__option', { hasText: option }).click()
  }

  await step('home page', async t => {
    await page.goto(`${volto}/`)
    await page.locator('#navigation a', { hasText: 'Talks' }).first().waitFor()
    t.ok(await page.locator('#navigation a[href="/talks"]').count(), 'the navigation links the talks folder')
  })

  await step('talks folder', async t => {
    await page.goto(`${volto}/talks`)
    await page.locator('.breadcrumbs').waitFor()
    t.match(await page.locator('.breadcrumbs').innerText(), /Talks/, 'breadcrumbs show the folder')
    t.match(await page.locator('#view').innerText(), /Plone meets Fastify/, 'the published talk is listed')
  })

  await step('a talk in the add-on view', async t => {
    await page.goto(`${volto}/talks/plone-meets-fastify`)
    await page.locator('.talk-view').waitFor()
    t.match(await page.locator('.breadcrumbs').innerText(), /Talks[\s\S]*Plone meets Fastify/, 'breadcrumbs show the path')
    t.match(await heading(page), /Talk: Plone meets Fastify/)
    t.equal(await page.locator('.talk-speaker-name').innerText(), 'admin', 'no speaker: the first creator is shown')
    t.equal(await page.locator('.talk-details').innerText(), 'Volto in front of a Fastify service', 'no details: the description stands in')
  })

  await step('log in', async t => {
    await page.goto(`${volto}/login`)
    await page.locator('#login').fill('admin')
    await page.locator('#password').fill(ADMIN_PASSWORD)
    await page.locator('#login-form-submit').click()
    await page.locator('#toolbar-personal').waitFor()
    t.pass('the toolbar shows the personal tools')
  })

  const title = 'Fastify in five minutes'
  let talkPath = '/talks/fastify-in-five-minutes'
  await step('add a lightning talk', async t => {
    await page.goto(`${volto}/talks/add?type=talk`)
    await showField(page, 'title')
    await page.locator('#field-title').fill(title)
    await page.locator('#field-description').fill('A lightning talk added through Volto')
    await choose(page, 'type_of_talk', 'Lightning Talk')
    await choose(page, 'audience', 'Beginner')
    await page.locator('#toolbar-save').click()
    await page.waitForURL(url => !url.pathname.endsWith('/add'))
    talkPath = pathOf(page)
    t.match(talkPath, /^\/talks\/fastify-in-five-minutes/, 'Volto shows the new talk')
    t.match(await heading(page), /Fastify in five minutes/)
  })

  await step('edit its title', async t => {
    await page.goto(`${volto}${talkPath}`)
    await page.locator('#toolbar a.edit').click()
    await page.waitForURL(url => url.pathname.endsWith('/edit'))
    await showField(page, 'title')
    await page.locator('#field-title').fill(`${title}, revised`)
    await page.locator('#toolbar-save').click()
    await page.waitForURL(url => !url.pathname.endsWith('/edit'))
    t.match(await heading(page), /Fastify in five minutes, revised/)
  })

  await step('publish it from the toolbar', async t => {
    await page.goto(`${volto}${talkPath}`)
    await page.locator('#toolbar-more').click()
    // Volto lists the transitions of @workflow by their titles, and then shows the new state.
    const state = page.locator('.field-wrapper-state-select')
    await state.locator('.react-select__control').click()
    await page.locator('.react-select__option', { hasText: 'Publish' }).click()
    await state.locator('.react-select__single-value', { hasText: 'Published' }).waitFor()
    const stored = await (await fetch(`${service}${talkPath}`, { headers: auth })).json() as { review_state: string }
    t.equal(stored.review_state, 'published', 'the service has it published')
  })

  await step('find it on the search page', async t => {
    await page.goto(`${volto}/search?SearchableText=five`)
    await page.locator('#page-search, #content-core').first().waitFor()
    await page.locator('#content-core a', { hasText: 'Fastify in five minutes' }).first().waitFor()
    t.pass('the search page lists it')
  })

  await step('folder contents', async t => {
    await page.goto(`${volto}/talks`)
    await page.locator('#toolbar a[aria-label="Contents"]').click()
    await page.waitForURL(url => url.pathname === '/talks/contents')
    // Volto draws the table's head first and its rows when @search has answered.
    await page.locator('.folder-contents table tbody tr', { hasText: 'Fastify in five minutes' }).first().waitFor()
    const table = await page.locator('.folder-contents table').innerText()
    t.match(table, /Fastify in five minutes/)
    t.match(table, /Plone meets Fastify/)
  })

  /** Types text where the focus is, then waits for Volto to have it in its Slate state. */
  const typeInto = async (editable: ReturnType<Page['locator']>, text: string): Promise<void> => {
    await editable.click()
    await page.keyboard.type(text)
    await editable.filter({ hasText: text }).waitFor()
  }

  await step('add a page built of blocks', async t => {
    await page.goto(`${volto}/add?type=Document`)
    // Volto edits a type whose schema has blocks with its blocks editor: a title block and a text block to start with.
    await typeInto(page.locator('.block.inner.title [contenteditable="true"]'), 'Harbour news')
    await typeInto(page.locator('.content-area .slate-editor [contenteditable="true"]').last(), 'Lighthouse keepers meet on Friday')
    await page.locator('#toolbar-save').click()
    await page.waitForURL(url => !url.pathname.endsWith('/add'))
    t.match(await heading(page), /Harbour news/)
    t.match(await page.locator('#page-document').innerText(), /Lighthouse keepers meet on Friday/, 'the text block shows')
    const stored = await (await fetch(`${service}${pathOf(page)}`, { headers: auth })).json() as { '@type': string, blocks: Record<string, { '@type': string, plaintext?: string }> }
    t.equal(stored['@type'], 'Document')
    t.ok(Object.values(stored.blocks).some(block => block['@type'] === 'slate' && block.plaintext === 'Lighthouse keepers meet on Friday'), 'kept as Volto wrote it')
    const found = await (await fetch(`${service}/@search?SearchableText=lighthouse`, { headers: auth })).json() as { items: Array<{ title: string }> }
    t.same(found.items.map(i => i.title), ['Harbour news'], 'its text is found by full text')
  })

  await step('edit the home page', async t => {
    await page.goto(`${volto}/edit`)
    // A text block after the title (Enter at the end of the title block adds one), above the site's listing block.
    await page.locator('.block.inner.title [contenteditable="true"]').click()
    await page.keyboard.press('End')
    await page.keyboard.press('Enter')
    // The new block is there before it has the focus: typing waits for it.
    await typeInto(page.locator('.content-area .slate-editor [contenteditable="true"]').first(), 'Welcome to the conference site')
    await page.locator('#toolbar-save').click()
    await page.waitForURL(url => !url.pathname.endsWith('/edit'))
    await page.locator('#page-document', { hasText: 'Welcome to the conference site' }).waitFor()
    const root = await (await fetch(`${service}/`)).json() as { blocks_layout: { items: string[] } }
    t.same(root.blocks_layout.items.length, 3, 'the site root keeps its blocks: title, the new text, the listing')
    await page.locator('#page-document a', { hasText: 'Talks' }).first().waitFor()
    t.pass('the listing block lists the site\'s items under the text')
  })

  await step('Solr control panel', async t => {
    await page.goto(`${volto}/controlpanel/solr-controlpanel`)
    await page.locator('#field-host').waitFor()
    await page.locator('#toolbar-save').click()
    await page.locator('.toast-inner-content', { hasText: 'Changes saved' }).waitFor()
    t.pass('saved')
  })

  await step('log out', async t => {
    await page.goto(`${volto}/logout`)
    await page.locator('a[aria-label="login"]', { hasText: 'Log in' }).waitFor()
    t.equal(await page.locator('#toolbar-personal').count(), 0, 'no personal tools')
  })
})
