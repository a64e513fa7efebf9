import t from 'tap'
import { IncomingMessage } from 'node:http'
import { Socket } from 'node:net'
import { addressOf, createUrlRewriter, queryOf, type AddressInfo } from '../../plugins/support/url.js'
import fc from 'fast-check'
import { isoDate, urlOf } from '../../core/content/urls.js'

// How a request URL is split into the content it addresses and the service
// called on it (docs/api.md), and how URLs are written back (`@id`).
function rewrite (sitePath: string, url: string): { routed: string, address: AddressInfo } {
  const raw = new IncomingMessage(new Socket())
  raw.url = url
  const routed = createUrlRewriter(sitePath)(raw)
  return { routed, address: addressOf(raw) }
}

t.test('a content path is routed as itself', async t => {
  const { routed, address } = rewrite('', '/talks/my-talk?b_size=5')
  t.equal(routed, '/talks/my-talk?b_size=5')
  t.same(address, { contextPath: '/talks/my-talk', service: null, viaApiSegment: false, outsideSite: false, originalUrl: '/talks/my-talk?b_size=5' })
})

t.test('a service called on content is routed by its name; the content before it is the context', async t => {
  const { routed, address } = rewrite('', '/talks/my-talk/@workflow/publish?comment=ok')
  t.equal(routed, '/@workflow/publish?comment=ok')
  t.match(address, { contextPath: '/talks/my-talk', service: '@workflow' })
  t.match(rewrite('', '/@search').address, { contextPath: '/', service: '@search' }, 'on the site root')
  t.match(rewrite('', '/talks/a/@@download/image').address, { contextPath: '/talks/a', service: '@@download' })
})

t.test('the ++api++ segment is dropped from the route and remembered', async t => {
  const { routed, address } = rewrite('', '/++api++/talks/@search')
  t.equal(routed, '/@search')
  t.match(address, { contextPath: '/talks', viaApiSegment: true, originalUrl: '/++api++/talks/@search' })
})

t.test('SITE_PATH is cut off; a path outside it is marked', async t => {
  t.match(rewrite('/Plone', '/Plone/talks'), { routed: '/talks', address: { contextPath: '/talks', outsideSite: false } })
  t.match(rewrite('/Plone', '/Plone'), { routed: '/', address: { contextPath: '/', outsideSite: false } }, 'the site root itself')
  t.match(rewrite('/Plone', '/Plone/++api++/@users'), { routed: '/@users', address: { viaApiSegment: true, outsideSite: false } })
  for (const outside of ['/talks', '/', '/Plonetalks', '/plone/talks']) {
    t.equal(rewrite('/Plone', outside).address.outsideSite, true, outside)
  }
})

t.test('segments are percent-decoded into the context path; an undecodable one is not found', async t => {
  t.equal(rewrite('', '/talks/caf%C3%A9%20talk').address.contextPath, '/talks/café talk')
  t.equal(rewrite('', '/talks/%E0%A4%A').address.outsideSite, true)
})

t.test('a request that was not rewritten addresses the site root', async t => {
  const raw = new IncomingMessage(new Socket())
  raw.url = '/x'
  t.same(addressOf(raw), { contextPath: '/', service: null, viaApiSegment: false, outsideSite: false, originalUrl: '/x' })
})

t.test('urlOf joins a path to the base URL, encoding what a path segment may not hold', async t => {
  t.equal(urlOf('http://h/Plone', '/'), 'http://h/Plone', 'the site root is the base URL')
  t.equal(urlOf('http://h/Plone', '/talks/a'), 'http://h/Plone/talks/a')
  t.equal(urlOf('http://h', '/talks/café talk'), 'http://h/talks/caf%C3%A9%20talk')
  t.equal(urlOf('http://h', '/@users/jane@example.org'), 'http://h/@users/jane@example.org', '@ needs no escaping in a path')
  t.equal(urlOf('http://h', '/a?b#c'), 'http://h/a%3Fb%23c', '? and # are escaped: a name cannot cut the path short')
})

t.test('urlOf and isoDate write what encoding every segment and cutting the milliseconds would, for any path and any date', async t => {
  // The oracle: the plain forms, without the fast paths taken for common paths and four-digit years.
  const encodedSegments = (baseUrl: string, path: string): string => path === '/' ? baseUrl : baseUrl + path.split('/').map(s => encodeURIComponent(s).replace(/%40/g, '@')).join('/')
  const character = fc.constantFrom(...'aZ09-_.!~*\'()@/ ?#%&+=:;,é\u0000\ud800'.split(''))
  fc.assert(fc.property(fc.array(character, { maxLength: 12 }).map(cs => `/${cs.join('')}`), path => {
    // A lone surrogate has no encoding: both throw (no stored path holds one: ids are made of titles' words).
    const outcome = (write: () => string): string => { try { return write() } catch (err) { return `throws ${(err as Error).name}` } }
    t.equal(outcome(() => urlOf('http://h/Plone', path)), outcome(() => encodedSegments('http://h/Plone', path)))
  }), { numRuns: 2000 })
  const MAX_TIME = 8.64e15
  fc.assert(fc.property(fc.integer({ min: -MAX_TIME, max: MAX_TIME }), ms => {
    const date = new Date(ms)
    t.equal(isoDate(date), date.toISOString().replace(/\.\d{3}Z$/, '+00:00'))
    t.equal(isoDate(date.toISOString()), isoDate(date), 'a date given as its ISO text reads the same')
  }), { numRuns: 2000 })
  t.equal(isoDate('not a date'), null)
})

t.test('queryOf reads a request URL\'s query as the URL parser does, for any URL Node\'s HTTP parser lets through', async t => {
  // Not spaces and control characters: the HTTP parser refuses them in a request target (the URL parser would trim or drop them).
  const character = fc.constantFrom(...'a=&?#%20+/é\ud800;'.split(''), '%aa', '%a0', '%C3%A9', 'Ã©')
  fc.assert(fc.property(fc.array(character, { maxLength: 16 }).map(cs => `/talks${cs.join('')}`), url => {
    t.same([...queryOf(url)], [...new URL(url, 'http://x').searchParams])
  }), { numRuns: 20000 })
})
