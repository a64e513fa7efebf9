/**
 * `npm run bench`: throughput, latency, memory and scaling of the service,
 * (Over 300 lines: the orchestration of one run — build, processes, sizes,
 * scenarios, report — reads best in order, in one place.)
 * each figure next to a floor measured in the same run (see
 * docs/performance.md). Options:
 *   --full           1k, 10k and 100k talks, longer runs (default: quick, 1k)
 *   --only=a,b       only these scenarios (ids from scenarios.mjs, or the jobs
 *                    reindex-solr, drain-1-worker, drain-2-workers,
 *                    move-folder-10k, site-import-100k, site-export-100k,
 *                    site-import-blobs-1g, site-export-blobs-1g); the floors
 *                    they are compared with always run; the site exchange's
 *                    jobs alone run no seeded level
 *   --sizes=1000,..  talk counts to measure at (1000000: see the seeder)
 *   --cpu-prof       run the service under `node --cpu-prof` (figures are then perturbed)
 *   --no-build       use dist/ as it is
 *   --seed=n         the varied traffic's random seed (default: a new one each
 *                    run, printed and kept in the report)
 *
 * Processes: this script (idle while measuring), the service, the floor, the
 * load generator (load.mjs), PostgreSQL, solr-dev and a redis-server of the
 * run's own (backends.mjs); the seeder (seed.mjs) and the Solr floors'
 * helper (solr-floor.mjs) run between measurements. At the end the service
 * is started again with SOLR_ASYNC=true for the asynchronous create, then
 * its queue is filled and drained by one, then two, index worker processes.
 * The varied traffic (scenarios of `traffic: 'varied'`) needs a second
 * process of the service on the same database, started with the first when
 * such a scenario is chosen, and its users (crowd-users.mjs). The 100 MB
 * download's file is sent up by a process of the service of its own, whose
 * bounds allow it (see `download`). The site exchange's jobs (`siteExchange`)
 * come last, each on a database of its own, the command line (site-exchange.mjs)
 * alone against it.
 */
import { execFileSync, fork, spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { startRedis, startSolr } from './backends.mjs'
import { createCrowdUsers } from './crowd-users.mjs'
import { downloads, newFolder, sendBytes, tusUpload, uploadImages } from './media.mjs'
import { IMPORT_BATCH, importTalks, MOVED_TALKS, moveFolder } from './site-jobs.mjs'
import { FOLDERS, writeBlobExport, writeSiteExport } from './exports.mjs'
import { EXPORTED, IMPORTED, reported, runSite } from './site-exchange.mjs'
import { createDatabase, freePort, postgresCpu, postgresCpuSince, postgresVersion, queryOnce, resetPeak, startServer } from './processes.mjs'
import { writeCharts } from './charts.mjs'
import { call, login, setUpFetch } from './setup-calls.mjs'
import { pausesWithin } from './pauses.mjs'
import { markdownReport, terminalReport } from './report.mjs'
import { SCENARIOS } from './scenarios.mjs'
import { checkTargets } from './targets.mjs'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
/**
 * `drainTalks`: the objects at least in the queue when a drain starts. The full profile's are
 * enough for 30 batches of 1 000: 10 000 drained by two workers (four lanes) in about two seconds,
 * ending in a round of batches only half filled, so that its rate was mostly its start and its end.
 */
/**
 * `crowd`: the clients and seconds of the varied traffic (issue 23: 20 clients for 60 s); `images`:
 * the Images whose scales are made and served (11 scales each); `downloads`: of the 100 MB file, one after the other.
 */
const PROFILES = {
  quick: { sizes: [1000], duration: 6, warmup: 2, connections: 10, bulkTalks: 500, drainTalks: 1000, crowd: { connections: 20, duration: 15 }, images: 24, downloads: 3 },
  full: { sizes: [1000, 10_000, 100_000], duration: 15, warmup: 3, connections: 10, bulkTalks: 2000, drainTalks: 30_000, crowd: { connections: 20, duration: 60 }, images: 100, downloads: 5 }
}
const ADMIN_PASSWORD = 'bench-admin-password'
const MEMBER = { login: 'bench-member', password: 'bench-member-password' }
/** A Member who reads /talks by a local role (`localReader`). */
const LOCAL_READER = { login: 'bench-reader', password: 'bench-reader-password' }
/**
 * The login flood stands for many clients from many addresses: throttling
 * (per login, per address) is raised out of reach so that every wrong
 * password costs its hash, the case the service must survive. No other
 * scenario fails a login.
 */
const NO_THROTTLE = { LOGIN_MAX_FAILURES: '10000', LOGIN_MAX_FAILURES_PER_IP: '10000' }
const SERVICE_ENV = { LOG_LEVEL: 'warn', ADMIN_PASSWORD, JWT_SECRET: 'bench-secret-that-is-long-enough-for-hs256', ...NO_THROTTLE }
const IDLE_SETTLE_MS = 1000
const SAMPLE_TALKS = 200
/** The large file (issue 24): 500 MB, sent up in PATCHes of 50 MB; and MB as the report counts memory. */
const MB = 2 ** 20
const FILE_BYTES = 500 * MB
const UPLOAD_PIECE_BYTES = 50 * MB
/**
 * A site's move in and out (issue 26), at the same scale whatever the profile: its objects (a
 * few thousand folders of talks and pages) and 1 GB of Files (with a few JPEGs), each export
 * drawn from its seed. The bulk import it is held against imports as many talks (site-jobs.mjs).
 */
const SITE_OBJECTS = 100_000
const SITE_SEED = 26
const BLOB_FILES = 100
const BLOB_FILE_BYTES = 10 * MB
const BLOB_IMAGES = 4
const BLOB_SEED = 27

const { values: args } = parseArgs({
  options: {
    full: { type: 'boolean', default: false },
    only: { type: 'string' },
    sizes: { type: 'string' },
    'cpu-prof': { type: 'boolean', default: false },
    'no-build': { type: 'boolean', default: false },
    seed: { type: 'string' }
  }
})
const profileName = args.full ? 'full' : 'quick'
const settings = { ...PROFILES[profileName], ...(args.sizes !== undefined ? { sizes: args.sizes.split(',').map(Number) } : {}) }
const only = args.only?.split(',')
const seed = args.seed !== undefined ? Number(args.seed) >>> 0 : Math.floor(Math.random() * 2 ** 32)
/** Jobs timed by this script rather than by the load generator. */
const JOBS = {
  reindex: { id: 'reindex-solr', title: 'reindex into Solr (@solr-maintenance/reindex)', group: 'job', unit: 'docs/s', floor: 'floor-solr-ingest' },
  ingest: { id: 'floor-solr-ingest', title: 'floor: raw bulk ingest into the search server, one client', group: 'floor', unit: 'docs/s' },
  drain1: { id: 'drain-1-worker', title: 'drain of the async queue, 1 worker process', group: 'job', unit: 'docs/s', floor: 'floor-solr-ingest', workers: 1 },
  drain2: { id: 'drain-2-workers', title: 'drain of the async queue, 2 worker processes', group: 'job', unit: 'docs/s', floor: 'floor-solr-ingest', workers: 2 },
  upload: { id: 'upload-500mb-tus', title: 'a 500 MB File sent up by resumable upload (@tus-upload, PATCHes of 50 MB), one client', group: 'job', unit: 'MB/s', floor: 'floor-upload-stream' },
  uploadStream: { id: 'floor-upload-stream', title: 'floor: the same bytes in one request written into a large object in 1 MiB slices with pg', group: 'floor', unit: 'MB/s' },
  download: { id: 'download-500mb', title: 'GET @@download/file of a 500 MB File, one client, the same file downloaded again, anonymous', group: 'job', unit: 'MB/s', floor: 'floor-file-stream' },
  fileStream: { id: 'floor-file-stream', title: 'floor: the same large object streamed by one binary COPY of its 256 KiB slices with pg', group: 'floor', unit: 'MB/s' },
  move: { id: 'move-folder-10k', title: `POST @move of a folder of ${MOVED_TALKS} published talks into another, Solr on (delivered by the request), one client; then Solr's drift`, group: 'job', unit: 'objects/s' },
  bulkImport: { id: 'bulk-import-100k', title: `bulk import into a new site: ${SITE_OBJECTS / IMPORT_BATCH} POST /talks/@import of ${IMPORT_BATCH} talks, one after the other (one client), each published, no Solr (what site-import-100k is held against)`, group: 'job', unit: 'talks/s' },
  siteImport: { id: 'site-import-100k', title: `npm run site -- import of ${SITE_OBJECTS} objects from a folder (${FOLDERS} folders, talks and pages, 7 in 10 published, with histories and local roles) into a new site, one process, no service running, no Solr`, group: 'job', unit: 'objects/s', floor: 'bulk-import-100k' },
  siteExport: { id: 'site-export-100k', title: 'npm run site -- export of that site into a new folder, one process, no service running, no writes', group: 'job', unit: 'objects/s' },
  siteImportBlobs: { id: 'site-import-blobs-1g', title: `npm run site -- import of ${BLOB_FILES} Files of ${BLOB_FILE_BYTES / MB} MiB (random bytes) and ${BLOB_IMAGES} JPEGs from a folder into a new site, one process, no service running, no Solr; RSS growth over the same command importing one 1 kB File`, group: 'job', unit: 'MB/s' },
  siteExportBlobs: { id: 'site-export-blobs-1g', title: 'npm run site -- export of that site into a new folder, one process, no service running, no writes; RSS growth over the same command exporting one 1 kB File', group: 'job', unit: 'MB/s' }
}
/** Jobs that bring their sites with them: chosen alone, the run measures no seeded level. */
const EXCHANGE_JOBS = [JOBS.bulkImport, JOBS.siteImport, JOBS.siteExport, JOBS.siteImportBlobs, JOBS.siteExportBlobs]
const chosen = scenario => only === undefined || only.includes(scenario.id)
/** What runs: the chosen scenarios and jobs, and every floor one of them is compared with (floor-db always). */
const selected = scenario => scenario.group !== 'floor'
  ? chosen(scenario)
  : scenario.id === 'floor-db' || scenario.id === 'floor-static' ||
    [...SCENARIOS, ...Object.values(JOBS)].some(s => s.floor === scenario.id && chosen(s))
const levelsChosen = [...SCENARIOS, ...Object.values(JOBS)].some(s => s.group !== 'floor' && !EXCHANGE_JOBS.includes(s) && chosen(s))
const FULL_TEXT_SOLR = SCENARIOS.find(s => s.id === 'fulltext-solr')
/** The targets of scenarios measured once, at the largest size, by a service of their own started after the levels. */
const AFTER_THE_LEVELS = ['async', 'unversioned']
const SOLR_ON = { active: true, auto_commit: true, commit_within: 0 }
const stamp = new Date().toISOString().replace(/[:.]/g, '-')
const outDir = join(ROOT, 'bench', 'results', stamp)
const say = message => console.error(`[bench] ${message}`)

/** The load generator as a child process, one job at a time. */
function loadGenerator () {
  const child = fork(join(ROOT, 'bench', 'load.mjs'))
  let jobs = 0
  return {
    run: job => new Promise((resolve, reject) => {
      const id = ++jobs
      const onExit = code => reject(new Error(`the load generator exited (${code}) during ${job.scenarioId}`))
      const onMessage = message => {
        if (message.id !== id) return
        child.off('message', onMessage)
        child.off('exit', onExit)
        resolve(message.result)
      }
      child.on('message', onMessage)
      child.once('exit', onExit)
      child.send({ ...job, id })
    }),
    stop: () => { if (child.connected) child.disconnect() }
  }
}

/** A helper script of the bench as a process of its own, with the service's environment; answers its last line as JSON. */
function helper (script, scriptArgs, env) {
  const output = execFileSync(process.execPath, [join(ROOT, 'bench', script), ...scriptArgs], {
    env: { ...process.env, ...SERVICE_ENV, ...env },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 64 * 2 ** 20
  })
  return JSON.parse(output.trim().split('\n').pop())
}

const inspect = async (databaseUrl, sql) => (await queryOnce(databaseUrl, sql)).rows

/** Paths of published talks spread over the whole folder, and how many talks there are. */
async function sampleTalks (databaseUrl) {
  const rows = await inspect(databaseUrl, `SELECT path FROM content WHERE portal_type = 'talk' AND review_state = 'published'
    ORDER BY md5(path) LIMIT ${SAMPLE_TALKS}`)
  const [{ n }] = await inspect(databaseUrl, "SELECT count(*)::int AS n FROM content WHERE portal_type = 'talk'")
  return { paths: rows.map(r => r.path), count: n }
}

/** Every item of a folder should have its own position; concurrent creates must not share one. */
async function positionsInTalks (databaseUrl) {
  const [row] = await inspect(databaseUrl, `SELECT count(*)::int AS items, count(DISTINCT position)::int AS positions
    FROM content WHERE parent_uid = (SELECT uid FROM content WHERE path = '/talks')`)
  return row
}

/** Where a service process writes its event loop's pauses (bench/pauses.mjs). */
const pausesFile = logName => join(outDir, logName.replace(/\.log$/, '-pauses.jsonl'))

/** Each process's pauses within a crowd's window: the service processes' from their files, the clients' from the crowd. */
function pausesOfWindow (services, { window, clientPauses }) {
  const read = file => readFileSync(file, 'utf8').split('\n').filter(line => line !== '').map(line => JSON.parse(line))
  return [
    ...services.map((service, i) => ({
      process: `service ${i + 1}`,
      pauses: pausesWithin(existsSync(service.pausesFile) ? read(service.pausesFile) : [], window.from, window.to)
    })),
    { process: 'the clients', pauses: clientPauses }
  ]
}

async function startService (env, logName = 'service.log') {
  const server = await startServer({
    script: join(ROOT, 'dist', 'app', 'server.js'),
    nodeArgs: [
      '--import', pathToFileURL(join(ROOT, 'bench', 'pauses.mjs')).href,
      ...(args['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${join(outDir, 'profiles')}`] : [])
    ],
    env: { ...SERVICE_ENV, ...env, BENCH_PAUSES_FILE: pausesFile(logName) },
    port: await freePort(),
    readyPath: '/',
    logFile: join(outDir, logName)
  })
  return Object.assign(server, { pausesFile: pausesFile(logName) })
}

/** Waits until the process's resident catalogue is loaded (or off); says how it stands. */
async function residentLoaded (url, timeoutMs = 15 * 60_000) {
  const started = Date.now()
  for (;;) {
    const res = await fetch(`${url}/@health?verbose`, { headers: { accept: 'application/json' } })
    const resident = (await res.json()).resident_catalogue
    if (resident === undefined || resident.state !== 'loading') {
      return `resident catalogue of ${url}: ${resident?.state ?? 'unknown'}, ${resident?.documents ?? 0} documents, ${((resident?.bytes ?? 0) / 2 ** 20).toFixed(0)} MB (waited ${((Date.now() - started) / 1000).toFixed(1)} s)`
    }
    if (Date.now() - started > timeoutMs) throw new Error(`the resident catalogue of ${url} did not load within ${timeoutMs / 1000} s`)
    await sleep(500)
  }
}

async function idleMemory (server) {
  await sleep(IDLE_SETTLE_MS)
  return await server.memory()
}

/** A job's record: a rate, no latencies. */
const jobRecord = (job, talks, count, seconds) => ({ ...job, talks, status: 'measured', count, seconds, rate: count / seconds, errors: 0, latency: { p50: null, p99: null } })

/** Every talk's Solr document into the search server's spare core, from one client (solr-floor.mjs). */
function ingestFloor (env, solr, talks) {
  try {
    const { count, seconds } = helper('solr-floor.mjs', ['ingest', solr.url, solr.ingestCore], env)
    return jobRecord(JOBS.ingest, talks, count, seconds)
  } catch (err) {
    return { ...JOBS.ingest, talks, status: 'failed', reason: err.message }
  }
}

/** Every object into Solr through the maintenance endpoint (Solr on), timed from the request to the last line. */
async function reindex (service, token, talks) {
  await call(service.url, 'PATCH', '/@controlpanels/solr-controlpanel', SOLR_ON, token)
  const started = performance.now()
  const res = await setUpFetch(`${service.url}/@solr-maintenance/reindex`, { method: 'POST', headers: { authorization: `Bearer ${token}` } })
  const text = await res.text()
  const seconds = (performance.now() - started) / 1000
  const done = text.match(/reindexed (\d+) objects/)
  if (!res.ok || done === null) return { ...JOBS.reindex, talks, status: 'failed', reason: `answered ${res.status}: ${text.slice(-200)}` }
  return jobRecord(JOBS.reindex, talks, Number(done[1]), seconds)
}

/**
 * The queue left by the asynchronous creates, drained by `job.workers` index
 * worker processes: timed from the moment the first of them is ready to an
 * empty outbox (the `outbox.pending` of `npm run solr -- status`: what is not
 * in Solr yet).
 */
async function drain (job, env, databaseUrl, talks) {
  const pending = async () => (await inspect(databaseUrl, 'SELECT count(DISTINCT uid)::int AS n FROM index_outbox'))[0].n
  const count = await pending()
  const workers = Array.from({ length: job.workers }, (_, i) => {
    const logFile = join(outDir, `worker-${job.workers}-${i + 1}.log`)
    const child = spawn(process.execPath, [join(ROOT, 'dist', 'app', 'worker.js')], { env: { ...process.env, ...SERVICE_ENV, ...env, LOG_LEVEL: 'info' }, stdio: ['ignore', openSync(logFile, 'a'), openSync(logFile, 'a')] })
    return { child, logFile, exited: new Promise(resolve => child.once('exit', resolve)) }
  })
  try {
    // From the first worker ready: it starts delivering at once, before the others are.
    const ready = ({ logFile }) => readFileSync(logFile, 'utf8').includes('"msg":"index worker ready"')
    let started
    for (let waiting = workers; waiting.length > 0; waiting = waiting.filter(w => !ready(w))) {
      if (waiting.length < workers.length) started ??= performance.now()
      const exited = waiting.find(w => w.child.exitCode !== null)
      if (exited !== undefined) return { ...job, talks, status: 'failed', reason: `a worker exited (${exited.child.exitCode}); see ${exited.logFile}` }
      await sleep(20)
    }
    started ??= performance.now()
    while (await pending() > 0) await sleep(20)
    return jobRecord(job, talks, count, (performance.now() - started) / 1000)
  } finally {
    for (const { child } of workers) child.kill('SIGTERM')
    await Promise.all(workers.map(w => w.exited))
  }
}

/**
 * The 500 MB file: sent up by resumable upload to `service`, and the same
 * bytes to the floor; then downloaded `settings.downloads` times by one
 * client from the floor and from `service`. The service's peak RSS over the
 * upload and over its downloads (the first included: nothing warmed it) is
 * set against its RSS before each: it streams the file, it must not hold it.
 */
async function largeFile (service, floor, token, talks) {
  const failed = (job, err) => ({ ...job, talks, status: 'failed', reason: err.message })
  const measuredMemory = async (record, before) => {
    const after = await service.memory()
    return Object.assign(record, { memoryAfter: after, rss: { fileMB: FILE_BYTES / MB, beforeMB: before.rss, peakMB: after.peak, growthMB: after.peak - before.rss } })
  }
  say(`floor-upload-stream at ${talks} talks`)
  let floorUpload
  try {
    const started = performance.now()
    const sent = await sendBytes(`${floor.url}/upload`, 'POST', { 'content-type': 'application/offset+octet-stream' }, FILE_BYTES)
    if (sent.status !== 200) throw new Error(`the floor's upload answered ${sent.status}`)
    floorUpload = jobRecord(JOBS.uploadStream, talks, FILE_BYTES / MB, (performance.now() - started) / 1000)
  } catch (err) {
    floorUpload = failed(JOBS.uploadStream, err)
  }
  say(`upload-500mb-tus at ${talks} talks`)
  let file
  let upload
  await resetPeak(service.pid)
  const beforeUpload = await service.memory()
  try {
    file = await tusUpload(service.url, token, FILE_BYTES, UPLOAD_PIECE_BYTES)
    upload = await measuredMemory(jobRecord(JOBS.upload, talks, FILE_BYTES / MB, file.seconds), beforeUpload)
  } catch (err) {
    return [floorUpload, failed(JOBS.upload, err), failed(JOBS.fileStream, err), failed(JOBS.download, err)]
  }
  const timed = async (job, url) => {
    try {
      const { bytes, seconds } = await downloads(url, settings.downloads, FILE_BYTES)
      return jobRecord(job, talks, bytes / MB, seconds)
    } catch (err) {
      return failed(job, err)
    }
  }
  say(`floor-file-stream at ${talks} talks`)
  const floorDownload = await timed(JOBS.fileStream, `${floor.url}/file/${file.uid}`)
  say(`download-500mb at ${talks} talks`)
  await resetPeak(service.pid)
  const beforeDownload = await service.memory()
  const download = await measuredMemory(await timed(JOBS.download, `${service.url}${file.path}/@@download/file`), beforeDownload)
  return [floorUpload, upload, floorDownload, download]
}

/**
 * A new database for one of the site exchange's jobs, named after it, whose
 * site (its root, /talks, the admin) the service's first start made: the
 * service is answered still running, for the caller to use or stop.
 * `leftovers` collects what the run's clean-up must drop.
 */
async function newSite (env, name, leftovers) {
  const database = await createDatabase(`bench_${process.pid}_${name}`)
  leftovers.databases.push(database)
  const siteEnv = { ...env, DATABASE_URL: database.url }
  const service = await startService(siteEnv, `service-${name}.log`)
  leftovers.services.push(service)
  return { database, env: siteEnv, service }
}

/**
 * The site exchange (issue 26), each on a new site: the bulk import of as
 * many talks as the site's objects, one request at a time as the command
 * writes one batch at a time; then, the service stopped, `npm run site
 * -- import` of SITE_OBJECTS objects from an export written for it and
 * `npm run site -- export` of them; then the same of 1 GB of Files on a
 * site of their own. An export chosen alone has its import run (and
 * reported) first; an import chosen alone runs no export. The peak RSS of
 * the Files' commands is set against that of the same command on one 1 kB
 * File (what the process costs without the bytes).
 * The exports are written into a temporary folder, deleted as soon as read.
 */
async function siteExchange (env, leftovers) {
  const records = []
  const scratch = mkdtempSync(join(os.tmpdir(), 'bench-exchange-'))
  leftovers.dirs.push(scratch)
  const log = name => join(outDir, `${name}.log`)
  const timed = async (what, write) => {
    const started = performance.now()
    const result = await write()
    say(`${what} in ${((performance.now() - started) / 1000).toFixed(1)} s`)
    return result
  }
  const failed = (job, err) => ({ ...job, talks: 0, status: 'failed', reason: err.message })
  if (chosen(JOBS.bulkImport) || chosen(JOBS.siteImport)) {
    say(`${JOBS.bulkImport.id}: a new site, ${SITE_OBJECTS} talks by POST @import`)
    try {
      const { database, service } = await newSite(env, 'bulk', leftovers)
      const token = await login(service.url, { login: 'admin', password: ADMIN_PASSWORD })
      const started = performance.now()
      await importTalks(service.url, token, '/talks', SITE_OBJECTS, 'bulk')
      records.push(jobRecord(JOBS.bulkImport, 0, SITE_OBJECTS, (performance.now() - started) / 1000))
      await service.stop()
      await database.drop()
    } catch (err) {
      records.push(failed(JOBS.bulkImport, err))
    }
  }
  if (selected(JOBS.siteImport) || selected(JOBS.siteExport)) {
    try {
      const exportDir = join(scratch, 'site')
      const objects = await timed(`wrote an export of ${SITE_OBJECTS} objects`, () => writeSiteExport(exportDir, SITE_OBJECTS, SITE_SEED))
      const site = await newSite(env, 'site', leftovers)
      await site.service.stop()
      say(`${JOBS.siteImport.id}: npm run site -- import of ${objects} objects`)
      const imported = await runSite(ROOT, ['import', exportDir], site.env, log(JOBS.siteImport.id))
      rmSync(exportDir, { recursive: true })
      const count = reported(imported.stdout, IMPORTED)
      if (count !== objects) throw new Error(`imported ${count} of ${objects} objects: ${imported.stdout}`)
      records.push({ ...jobRecord(JOBS.siteImport, 0, count, imported.seconds), commandRss: { peakMB: imported.peakMB } })
      // The export needs the site imported; the import alone needs no export.
      if (selected(JOBS.siteExport)) {
        say(`${JOBS.siteExport.id}: npm run site -- export`)
        const outFolder = join(scratch, 'site-out')
        const exported = await runSite(ROOT, ['export', outFolder], site.env, log(JOBS.siteExport.id))
        // The metadata of every object in one file, which an import reads whole (at most core/exchange/site.ts's JSON_MAX_BYTES).
        const metadataMB = statSync(join(outFolder, 'content', '__metadata__.json')).size / MB
        rmSync(outFolder, { recursive: true })
        records.push({ ...jobRecord(JOBS.siteExport, 0, reported(exported.stdout, EXPORTED), exported.seconds), commandRss: { peakMB: exported.peakMB }, metadataMB })
      }
      await site.database.drop()
    } catch (err) {
      records.push(...[JOBS.siteImport, JOBS.siteExport].filter(job => !records.some(r => r.id === job.id)).map(job => failed(job, err)))
    }
  }
  if (selected(JOBS.siteImportBlobs) || selected(JOBS.siteExportBlobs)) {
    try {
      const exportDir = join(scratch, 'blobs')
      const baselineDir = join(scratch, 'baseline')
      const blobs = await timed(`wrote an export of ${BLOB_FILES} Files and ${BLOB_IMAGES} Images`, () => writeBlobExport(exportDir, { files: BLOB_FILES, fileBytes: BLOB_FILE_BYTES, images: BLOB_IMAGES, seed: BLOB_SEED, folderId: 'files-1g' }))
      await writeBlobExport(baselineDir, { files: 1, fileBytes: 1024, images: 0, seed: BLOB_SEED + 1, folderId: 'baseline' })
      const site = await newSite(env, 'blobs', leftovers)
      await site.service.stop()
      const commandRss = (baseline, measured) => ({ baselineMB: baseline.peakMB, peakMB: measured.peakMB, growthMB: measured.peakMB - baseline.peakMB })
      say(`${JOBS.siteImportBlobs.id}: npm run site -- import of ${blobs.megabytes.toFixed(0)} MB, after one of 1 kB`)
      const baselineImport = await runSite(ROOT, ['import', baselineDir], site.env, log(JOBS.siteImportBlobs.id))
      const imported = await runSite(ROOT, ['import', exportDir], site.env, log(JOBS.siteImportBlobs.id))
      const count = reported(imported.stdout, IMPORTED)
      if (count !== blobs.objects) throw new Error(`imported ${count} of ${blobs.objects} objects: ${imported.stdout}`)
      rmSync(exportDir, { recursive: true })
      records.push({ ...jobRecord(JOBS.siteImportBlobs, 0, blobs.megabytes, imported.seconds), objects: count, commandRss: commandRss(baselineImport, imported) })
      if (selected(JOBS.siteExportBlobs)) {
        say(`${JOBS.siteExportBlobs.id}: npm run site -- export, after one of the 1 kB File`)
        const baselineExport = await runSite(ROOT, ['export', join(scratch, 'baseline-out'), '--path', '/baseline/recording-1.bin'], site.env, log(JOBS.siteExportBlobs.id))
        const exported = await runSite(ROOT, ['export', join(scratch, 'blobs-out')], site.env, log(JOBS.siteExportBlobs.id))
        records.push({ ...jobRecord(JOBS.siteExportBlobs, 0, blobs.megabytes, exported.seconds), objects: reported(exported.stdout, EXPORTED), commandRss: commandRss(baselineExport, exported) })
      }
      await site.database.drop()
    } catch (err) {
      records.push(...[JOBS.siteImportBlobs, JOBS.siteExportBlobs].filter(job => !records.some(r => r.id === job.id)).map(job => failed(job, err)))
    }
  }
  rmSync(scratch, { recursive: true, force: true })
  return records
}

/** The commit measured, and whether the working tree differed from it. */
function revision () {
  const git = (...gitArgs) => execFileSync('git', gitArgs, { cwd: ROOT, encoding: 'utf8' }).trim()
  try {
    return `${git('rev-parse', '--short', 'HEAD')}${git('status', '--porcelain', '--untracked-files=no') === '' ? '' : ' + uncommitted changes'}`
  } catch {
    return 'unknown (not a git checkout)'
  }
}

async function main () {
  if (!args['no-build']) {
    say('building the service (npm run build)')
    try {
      execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' })
    } catch {
      throw new Error('the build failed (above); fix it, or measure dist/ as it is with --no-build')
    }
  }
  mkdirSync(outDir, { recursive: true })
  const database = await createDatabase()
  const report = {
    profile: profileName,
    settings,
    startedAt: new Date().toISOString(),
    revision: revision(),
    machine: {
      cpus: os.availableParallelism(),
      cpuModel: os.cpus()[0]?.model ?? 'unknown',
      memoryGiB: os.totalmem() / 2 ** 30,
      node: process.version,
      postgres: await postgresVersion(),
      loadAverage: os.loadavg()
    },
    service: { seeded: [] },
    seed,
    results: []
  }
  let service
  let peer
  let asyncService
  let unversioned
  let floor
  let solr
  let redis
  const load = loadGenerator()
  /** What the site exchange's jobs made and the clean-up must remove: their databases, services and exports. */
  const leftovers = { databases: [], services: [], dirs: [] }
  // solr-dev runs detached and the database outlives the run: Ctrl-C must stop and drop them too.
  const cleanUp = async () => {
    load.stop()
    await floor?.stop()
    await service?.stop()
    await peer?.stop()
    await asyncService?.stop()
    await unversioned?.stop()
    for (const site of leftovers.services) await site.stop()
    await Promise.all([solr?.stop(), redis?.stop()])
    for (const dir of leftovers.dirs) rmSync(dir, { recursive: true, force: true })
    for (const site of leftovers.databases) await site.drop()
    await database.drop()
  }
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.once(signal, () => { say(`${signal}: stopping`); void cleanUp().finally(() => process.exit(130)) })
  }
  try {
    say('starting solr-dev and redis-server')
    ;[solr, redis] = await Promise.all([startSolr(ROOT), startRedis()])
    // Solr's address is known from the start, but Solr is on only for the scenarios that measure it (their `settings`).
    const env = { DATABASE_URL: database.url, ...solr.env, REDIS_URL: redis.url }
    say(`database ${database.name}; starting the service on an empty database`)
    service = await startService(env)
    report.service.fresh = { startupMs: service.startupMs, idle: await idleMemory(service) }
    floor = await startServer({
      script: join(ROOT, 'bench', 'floor.mjs'), env: { DATABASE_URL: database.url }, port: await freePort(), readyPath: '/static', logFile: join(outDir, 'floor.log')
    })
    const adminToken = await login(service.url, { login: 'admin', password: ADMIN_PASSWORD })
    await call(service.url, 'POST', '/@users', { username: MEMBER.login, email: 'bench-member@example.org', password: MEMBER.password, roles: ['Member'] }, adminToken)
    const tokens = { admin: adminToken, member: await login(service.url, MEMBER) }
    let crowd
    if (SCENARIOS.some(s => s.traffic === 'varied' && selected(s))) {
      say(`varied traffic: seed ${seed} (--seed=${seed} draws the same requests again); a second service process, and its users`)
      peer = await startService(env, 'service-2.log')
      const users = await createCrowdUsers([service.url, peer.url], adminToken)
      // The bench's own member owns the talks the create scenarios made: it may edit them too.
      crowd = { admin: adminToken, members: [...users.members, { login: MEMBER.login, token: tokens.member }], managers: users.managers }
    }

    /** What scenarios need made before them (`needs`, bench/media.mjs), made at the first that needs it. */
    const made = {}
    const MAKE = {
      images: async () => {
        const started = performance.now()
        const images = await uploadImages(service.url, tokens.admin, settings.images)
        say(`uploaded ${images.length} Images (${(images.reduce((sum, i) => sum + i.bytes, 0) / MB).toFixed(1)} MB of JPEG) in ${((performance.now() - started) / 1000).toFixed(1)} s`)
        return images
      },
      pages: async () => await newFolder(service.url, tokens.admin, 'bench-pages'),
      localReader: async () => {
        await call(service.url, 'POST', '/@users', { username: LOCAL_READER.login, email: 'bench-reader@example.org', password: LOCAL_READER.password, roles: ['Member'] }, tokens.admin)
        await call(service.url, 'POST', '/talks/@sharing', { entries: [{ id: LOCAL_READER.login, type: 'user', roles: { Reader: true } }] }, tokens.admin)
        return await login(service.url, LOCAL_READER)
      }
    }
    /** Makes what the scenario needs into `ctx`, then GETs what it primes (each must answer 200). */
    const prepare = async (scenario, ctx) => {
      for (const need of scenario.needs ?? []) ctx[need] = made[need] ??= await MAKE[need]()
      for (const path of scenario.prime?.(ctx) ?? []) {
        const res = await setUpFetch(service.url + path, { method: 'GET' })
        await res.arrayBuffer()
        if (!res.ok) throw new Error(`GET ${path} answered ${res.status}`)
      }
    }

    let job = 0
    const measure = async (scenario, talks, ctx) => {
      say(`${scenario.id} at ${talks} talks`)
      const target = { floor, solr, async: asyncService, unversioned }[scenario.target] ?? service
      if (scenario.settings !== undefined) await call(target.url, 'PATCH', '/@controlpanels/solr-controlpanel', scenario.settings, tokens.admin)
      const jobCtx = { ...ctx, job: ++job }
      try {
        await prepare(scenario, jobCtx)
      } catch (err) {
        say(`${scenario.id} failed: ${err.message}`)
        const record = { id: scenario.id, title: scenario.title, group: scenario.group, talks, status: 'failed', reason: `preparing it: ${err.message}` }
        report.results.push(record)
        return record
      }
      const varied = scenario.traffic === 'varied'
      const processes = varied ? [service, peer] : [target]
      const cpuBefore = varied ? await Promise.all(processes.map(p => p.cpuSeconds())) : []
      const postgresBefore = varied ? await postgresCpu() : undefined
      const result = await load.run({
        scenarioId: scenario.id,
        ctx: jobCtx,
        url: target.url,
        connections: varied ? settings.crowd.connections : settings.connections,
        duration: varied ? settings.crowd.duration : settings.duration,
        warmup: scenario.amount !== undefined ? 0 : settings.warmup,
        amount: scenario.amount?.(jobCtx),
        ...(varied ? { urls: processes.map(p => p.url), databaseUrl: database.url } : {})
      })
      const record = { id: scenario.id, title: scenario.title, group: scenario.group, traffic: varied ? 'varied' : 'repeated', talks, unit: scenario.unit ?? 'req/s', ...result }
      if (varied) {
        // Where the time went: the service's processes (warm-up included), the rest being PostgreSQL's and the load's.
        const cpuAfter = await Promise.all(processes.map(p => p.cpuSeconds()))
        record.serviceCpuSeconds = cpuAfter.map((after, i) => after - cpuBefore[i])
        record.postgresCpuSeconds = await postgresCpuSince(postgresBefore)
        if (result.status === 'measured') record.pauses = pausesOfWindow(processes, result)
        if (result.serverErrors > 0) say(`${scenario.id}: ${result.serverErrors} answers 5xx: the run fails (see the notes and service*.log)`)
      }
      if (target.memory !== undefined && scenario.group !== 'floor') record.memoryAfter = await target.memory()
      report.results.push(record)
      if (result.status !== 'measured') say(`${scenario.id} failed: ${result.reason}`)
      return record
    }

    /** Each measured record's share of its floor (a rate of the same level, or the last level's for the jobs at the end). */
    const compare = (record, floorRecord) => {
      if (record.status !== 'measured' || floorRecord?.status !== 'measured') return
      record.floorId = floorRecord.id
      record.floorRate = floorRecord.rate
      // Requests against requests for HTTP scenarios (a bulk import's talk is two), documents against documents for jobs.
      record.ratio = (record.requestsPerSecond ?? record.rate) / floorRecord.rate
    }
    let ingest
    for (const [level, size] of (levelsChosen ? settings.sizes : []).entries()) {
      say(`seeding to ${size} talks`)
      const seeded = helper('seed.mjs', [String(size)], { DATABASE_URL: database.url })
      say(`seeded ${seeded.added} talks in ${seeded.seconds.toFixed(1)} s (${seeded.rate.toFixed(0)} talks/s)`)
      const sample = await sampleTalks(database.url)
      // The database's size after seeding: what a larger size would need on disk.
      const [{ bytes }] = await inspect(database.url, 'SELECT pg_database_size(current_database()) AS bytes')
      report.service.seeded.push({ talks: sample.count, added: seeded.added, seedSeconds: seeded.seconds, seedRate: seeded.rate, databaseMB: Number(bytes) / 2 ** 20, memory: await service.memory() })
      const ctx = { talks: sample.paths, tokens, memberLogin: MEMBER, bulkTalks: settings.bulkTalks, seed, crowd }
      // A process answers from PostgreSQL until its resident catalogue has loaded (docs/architecture.md): measure it loaded.
      for (const server of [service, peer].filter(Boolean)) say(await residentLoaded(server.url))
      // The floor before and after the level's scenarios: its mean is the
      // level's floor, and the difference shows how much the machine drifted.
      const floorScenario = SCENARIOS.find(s => s.id === 'floor-db')
      const before = await measure(floorScenario, sample.count, ctx)
      // The paced crowds arrive at a share of it.
      ctx.floorRate = before.rate
      if (selected(JOBS.ingest)) {
        say(`floor-solr-ingest at ${sample.count} talks`)
        ingest = ingestFloor(env, solr, sample.count)
        report.results.push(ingest)
      }
      // Solr holds the talks only after a reindex: the Solr search needs it too.
      if (selected(JOBS.reindex) || selected(FULL_TEXT_SOLR)) {
        say(`reindex-solr at ${sample.count} talks`)
        const record = await reindex(service, tokens.admin, sample.count)
        compare(record, ingest)
        report.results.push(record)
      }
      const records = []
      for (const scenario of SCENARIOS.filter(s => s.id !== 'floor-db' && !AFTER_THE_LEVELS.includes(s.target) && selected(s) && (level === 0 || s.scaled))) {
        if (scenario.id === 'floor-solr-query') {
          // The selects to replay are the ones the service sends now, with Solr on as the Solr search left it.
          try {
            ctx.solrSelects = helper('solr-floor.mjs', ['selects', solr.url], env)
          } catch (err) {
            say(`floor-solr-query failed: ${err.message}`)
            report.results.push({ id: scenario.id, title: scenario.title, group: scenario.group, talks: sample.count, status: 'failed', reason: err.message })
            continue
          }
        }
        records.push(await measure(scenario, sample.count, ctx))
        // The varied traffic retracted some of the sampled talks: the scenarios after it read talks published now.
        if (scenario.traffic === 'varied') ctx.talks = (await sampleTalks(database.url)).paths
      }
      if (level === 0 && (selected(JOBS.upload) || selected(JOBS.download))) {
        const [floorUpload, upload, floorDownload, download] = await largeFile(service, floor, tokens.admin, sample.count)
        compare(upload, floorUpload)
        compare(download, floorDownload)
        report.results.push(floorUpload, upload, floorDownload, download)
      }
      if (level === 0 && selected(JOBS.move)) {
        say(`${JOBS.move.id} at ${sample.count} talks`)
        try {
          const moved = await moveFolder(service.url, tokens.admin, SOLR_ON)
          report.results.push({ ...jobRecord(JOBS.move, sample.count, moved.objects, moved.seconds), solrDrift: moved.drift, drifted: moved.drifted })
        } catch (err) {
          report.results.push({ ...JOBS.move, talks: sample.count, status: 'failed', reason: err.message })
        }
      }
      const after = await measure(floorScenario, sample.count, ctx)
      if (before.status === 'measured' && after.status === 'measured') {
        const floorRate = (before.rate + after.rate) / 2
        after.drift = after.rate / before.rate - 1
        for (const record of records.filter(r => r.status === 'measured' && r.group !== 'floor')) {
          const own = SCENARIOS.find(s => s.id === record.id).floor
          if (own !== undefined) compare(record, records.find(r => r.id === own))
          else compare(record, { id: 'floor-db', status: 'measured', rate: floorRate })
        }
      }
    }
    report.service.peakMB = (await service.memory()).peak
    await service.stop()
    await peer?.stop()

    const largest = report.service.seeded.at(-1)?.talks ?? 0
    // Versioning is read at start too: PATCH again, at the largest size, on a service that keeps no versions.
    const unversionedScenario = SCENARIOS.find(s => s.target === 'unversioned')
    if (selected(unversionedScenario)) {
      say('starting the service with VERSIONS_KEPT=0')
      unversioned = await startService({ ...env, VERSIONS_KEPT: '0' }, 'service-unversioned.log')
      await measure(unversionedScenario, largest, { talks: (await sampleTalks(database.url)).paths, tokens, memberLogin: MEMBER, bulkTalks: settings.bulkTalks })
      await unversioned.stop()
      unversioned = undefined
    }

    // Asynchronous indexing is read at start: a service of its own, without a worker, so that the queue fills.
    const asyncEnv = { ...env, SOLR_ASYNC: 'true', INDEX_WORKER: 'external' }
    const asyncScenario = SCENARIOS.find(s => s.target === 'async')
    const asyncCtx = { talks: [], tokens, memberLogin: MEMBER, bulkTalks: settings.bulkTalks }
    if (selected(asyncScenario)) {
      say('starting the service with SOLR_ASYNC=true')
      asyncService = await startService(asyncEnv)
      await measure(asyncScenario, largest, asyncCtx)
    }
    for (const drainJob of [JOBS.drain1, JOBS.drain2].filter(selected)) {
      asyncService ??= await startService(asyncEnv)
      // At least drainTalks operations wait in the queue: the asynchronous creates', and more made the same way.
      const [{ n: waiting }] = await inspect(database.url, 'SELECT count(DISTINCT uid)::int AS n FROM index_outbox')
      const missing = settings.drainTalks - waiting
      if (missing > 0) {
        say(`filling the queue with ${missing} talks for ${drainJob.id}`)
        // Solr on (the asynchronous scenario's settings): with Solr off a write records no index operation.
        await call(asyncService.url, 'PATCH', '/@controlpanels/solr-controlpanel', asyncScenario.settings, tokens.admin)
        await load.run({ scenarioId: asyncScenario.id, ctx: { ...asyncCtx, job: ++job }, url: asyncService.url, connections: settings.connections, warmup: 0, amount: missing })
      }
      await asyncService.stop()
      asyncService = undefined
      say(`${drainJob.id}: ${drainJob.workers} index worker process(es) empty the queue`)
      const record = await drain(drainJob, asyncEnv, database.url, largest)
      compare(record, ingest)
      report.results.push(record)
    }
    await asyncService?.stop()

    if (EXCHANGE_JOBS.some(selected)) {
      const exchanged = await siteExchange(env, leftovers)
      const [bulk, siteImport] = [JOBS.bulkImport, JOBS.siteImport].map(job => exchanged.find(r => r.id === job.id))
      if (bulk !== undefined && siteImport !== undefined) compare(siteImport, bulk)
      report.results.push(...exchanged)
    }

    report.integrity = { talksFolder: await positionsInTalks(database.url) }
    report.machine.loadAverageAtEnd = os.loadavg()
    say('restarting the service on the seeded database')
    service = await startService(env)
    report.service.restart = { startupMs: service.startupMs, idle: await idleMemory(service) }
  } finally {
    await cleanUp()
  }

  report.targets = checkTargets(report)
  const charts = writeCharts(report, outDir)
  writeFileSync(join(outDir, 'report.json'), JSON.stringify(report, null, 2))
  writeFileSync(join(outDir, 'report.md'), markdownReport(report) + '\n')
  console.log(terminalReport(report))
  // A 5xx under the varied traffic is a failure of the service, whatever the figures.
  if (report.results.some(r => r.serverErrors > 0)) process.exitCode = 1
  say(`results in ${outDir} (report.json, report.md, ${charts.join(', ')}${args['cpu-prof'] ? ', profiles/' : ''})`)
}

main().catch(err => {
  say(`stopped: ${err.stack ?? err}${err.cause !== undefined ? `\ncause: ${err.cause.stack ?? err.cause}` : ''}`)
  process.exitCode = 1
})
