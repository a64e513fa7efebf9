import { spawnSync } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import t from 'tap'
import { parse } from 'yaml'

/**
 * infra/docker-compose.yml cannot be run here (no Docker engine): its
 * structure is checked instead — the YAML with its anchors resolved, the
 * processes it starts, and that what it runs exists in this repository.
 */
const ROOT = resolve(import.meta.dirname, '../..')
const compose = parse(await readFile(resolve(ROOT, 'infra/docker-compose.yml'), 'utf8'), { merge: true })
const services = compose.services as Record<string, { image?: string, build?: { context: string, dockerfile: string }, command?: string[], environment?: Record<string, string>, depends_on?: Record<string, { condition: string }> }>

t.test('the whole stack: databases, a three-node SolrCloud with ZooKeeper, the deploy, web and worker', async t => {
  t.same(Object.keys(services).sort(), ['postgres', 'redis', 'solr-deploy', 'solr1', 'solr2', 'solr3', 'web', 'worker', 'zookeeper'])
  for (const node of ['solr1', 'solr2', 'solr3']) {
    t.equal(services[node].environment?.ZK_HOST, 'zookeeper:2181', `${node} runs in SolrCloud mode`)
    t.equal(services[node].environment?.SOLR_HOST, node, `${node} announces its own name`)
    t.match(services[node].environment?.SOLR_OPTS, '-Dsolr.max.booleanClauses=4096')
  }
  t.match(services.redis.command, ['redis-server', '--appendonly', 'yes'], 'Redis persists (AOF)')
})

t.test('web, worker and the deploy run one image built from the top-level Dockerfile', async t => {
  const dockerfile = await readFile(resolve(ROOT, 'Dockerfile'), 'utf8')
  t.match(dockerfile, 'RUN npm ci')
  t.match(dockerfile, /RUN npm run build/)
  for (const name of ['web', 'worker', 'solr-deploy']) {
    const service = services[name]
    t.equal(service.image, 'plone-talks-service:latest', name)
    t.same(service.build, { context: '..', dockerfile: 'Dockerfile' }, `${name}: built from the repository's root`)
    t.match(service.environment, { SOLR_ASYNC: 'true', SOLR_ACTIVE: 'true', REDIS_URL: 'redis://redis:6379', SOLR_BASE: '/solr/plone' }, name)
  }
  t.same(services.web.command, ['node', 'dist/app/server.js'])
  t.same(services.worker.command, ['node', 'dist/app/worker.js'])
  for (const name of ['web', 'worker']) {
    // Docker SIGKILLs after 10 s by default: the drain (5 s) and the wait for what is in flight (20 s) need more.
    t.equal((services[name] as { stop_grace_period?: string }).stop_grace_period, '30s', `${name} is given the time its shutdown takes`)
  }
  const [shell, flag, script] = services['solr-deploy'].command ?? []
  t.same([shell, flag], ['sh', '-c'])
  t.match(script, /^for node in solr1 solr2 solr3; do until node -e .*\/solr\/admin\/info\/system.* \$\$node; do sleep 2; done; done; /, 'waits for every node')
  t.match(script, /; for attempt in \$\$\(seq 60\); do node dist\/app\/cli\.js deploy --shards 1 --replicas 3 && exit 0; sleep 5; done; exit 1$/, 'then deploys, tried again while Solr cannot take it')
  // Compose turns $$ into $ before the shell sees the script.
  const syntax = spawnSync('sh', ['-n', '-c', script.replaceAll('$$', '$')], { encoding: 'utf8' })
  t.equal(syntax.status, 0, `the script is valid sh: ${syntax.stderr}`)
  for (const name of ['web', 'worker']) t.same(services[name].depends_on?.['solr-deploy'], { condition: 'service_completed_successfully' }, `${name} starts after the deploy`)
})
