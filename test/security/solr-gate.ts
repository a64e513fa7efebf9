// A gate between the service and solr-dev (not a test file): it passes every request, or
// acts as a Solr that is down, or as one that answers searches again while its updates still
// fail — the state after an outage in which the outbox still holds operations Solr has not
// applied, held for as long as the test needs it instead of for an unknown backoff.
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export type GateMode = 'open' | 'down' | 'updates refused'

interface TapLike { teardown: (fn: () => unknown) => void }

export interface SolrGate { port: number, mode: GateMode }

export async function solrGate (t: TapLike, solrPort: number): Promise<SolrGate> {
  const gate: SolrGate = { port: 0, mode: 'open' }
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (gate.mode === 'down') { req.socket.destroy(); return }
    if (gate.mode === 'updates refused' && /\/update(\/|\?|$)/.test(req.url ?? '')) {
      res.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 503, msg: 'updates refused by the test gate' } }))
      return
    }
    const upstream = request({ host: '127.0.0.1', port: solrPort, method: req.method, path: req.url, headers: req.headers }, answer => {
      res.writeHead(answer.statusCode ?? 502, answer.headers)
      answer.pipe(res)
    })
    upstream.on('error', () => { req.socket.destroy() })
    req.pipe(upstream)
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(async () => {
    server.closeAllConnections()
    await new Promise(resolve => server.close(resolve))
  })
  gate.port = (server.address() as AddressInfo).port
  return gate
}
