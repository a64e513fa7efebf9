import tap from 'tap'
import { batchingLinks, batchOf } from '../../core/query/paging.js'
import { parseBoolean, parseDate, parseInteger, parseZopeQuery } from '../../core/query/zope.js'

const parse = (query: string): Record<string, unknown> => parseZopeQuery(new URLSearchParams(query))

/** `fn` fails with the contract's 400 BadRequest (never a 500). */
const badRequest = (t: Pick<typeof tap, 'throws'>, fn: () => unknown, message: string): void => {
  t.throws(fn, { message: /./, statusCode: 400, type: 'BadRequest' }, message)
}

tap.test('plain and repeated names', async t => {
  t.same(parse('portal_type=talk'), { portal_type: 'talk' })
  t.same(parse('portal_type=talk&portal_type=folder'), { portal_type: ['talk', 'folder'] }, 'a repeated name is a list (OR)')
  t.same(parse('portal_type:list=talk'), { portal_type: ['talk'] }, ':list makes a list of one')
  t.same(parse('Subject:tuple=a&Subject:lines=b'), { Subject: ['a', 'b'] })
  t.same(parse('SearchableText='), { SearchableText: '' }, 'an empty value is kept')
})

tap.test('type converters', async t => {
  t.same(parse('b_size:int=10'), { b_size: 10 })
  t.same(parse('b_start:long=-5'), { b_start: -5 })
  t.same(parse('score:float=1.5'), { score: 1.5 })
  t.same(parse('is_folderish:boolean=true&exclude_from_nav:boolean=off'), { is_folderish: true, exclude_from_nav: false })
  t.same(parse('words:tokens=a b  c'), { words: ['a', 'b', 'c'] })
  t.same(parse('created:date=2025-01-02T03:04:05Z'), { created: '2025-01-02T03:04:05.000Z' })
  t.same(parse('size:int:list=1&size:int:list=2'), { size: [1, 2] }, 'converters combine with :list')
  t.same(parse('id:required=x&id2:ignore_empty=y'), { id: 'x', id2: 'y' }, 'form-only flags are ignored')
  badRequest(t, () => parse('b_size:int=ten'), 'a non-integer :int')
  badRequest(t, () => parse('b_size:int=1.5'), 'a fraction for :int')
  badRequest(t, () => parse('b_size:int=99999999999'), 'an integer beyond 32 bits')
  badRequest(t, () => parse('score:float=abc'), 'a non-number :float')
  badRequest(t, () => parse('score:float='), 'an empty :float')
  badRequest(t, () => parse('is_folderish:boolean=maybe'), 'a non-boolean :boolean')
  badRequest(t, () => parse('created:date=yesterday'), 'a non-date :date')
  badRequest(t, () => parse('x:weird=1'), 'an unknown converter')
})

tap.test('dotted names become records', async t => {
  t.same(parse('path.query=/talks&path.depth:int=1'), { path: { query: '/talks', depth: 1 } })
  t.same(parse('created.query=2025-01-01&created.range=min'), { created: { query: '2025-01-01', range: 'min' } })
  t.same(parse('created.query:list=2025-01-01&created.query:list=2025-02-01&created.range=min:max'),
    { created: { query: ['2025-01-01', '2025-02-01'], range: 'min:max' } })
  t.same(parse('audience=Beginner&audience=Advanced&audience.operator=and'),
    { audience: { query: ['Beginner', 'Advanced'], operator: 'and' } }, 'plain values before the record go into query')
  t.same(parse('audience.operator=and&audience=Beginner&audience=Advanced'),
    { audience: { operator: 'and', query: ['Beginner', 'Advanced'] } }, 'plain values after the record are added, not overwritten (Plone loses them)')
  t.same(parse('path.query=/a&path.query=/b&path.depth=0'), { path: { query: ['/a', '/b'], depth: '0' } })
  t.same(parse('facet.field=audience&facet.field=room&hl.fl=Title'), { 'facet.field': ['audience', 'room'], 'hl.fl': 'Title' },
    'facet.* and hl.* keep their dots (Solr parameter names)')
})

tap.test('values with NUL characters are refused, not passed to the database', async t => {
  badRequest(t, () => parse('portal_type=%00'), 'NUL in a value')
  badRequest(t, () => parse('a%00b=1'), 'NUL in a name')
})

tap.test('parseBoolean and parseInteger', async t => {
  for (const yes of ['1', 'y', 'yes', 't', 'true', 'True', 'on', 'enabled', 'active']) t.equal(parseBoolean(yes, 'x'), true, yes)
  for (const no of ['0', 'n', 'no', 'f', 'false', 'False', 'off', 'disabled', 'inactive', '']) t.equal(parseBoolean(no, 'x'), false, JSON.stringify(no))
  badRequest(t, () => parseBoolean('2', 'x'), 'a boolean of 2')
  t.equal(parseInteger(' 42 ', 'b_size'), 42)
  t.equal(parseInteger('2147483647', 'b_size'), 2147483647, 'the largest 32-bit integer')
  t.equal(parseInteger('-2147483648', 'b_size'), -2147483648, 'the smallest 32-bit integer')
  badRequest(t, () => parseInteger('2147483648', 'b_size'), 'one above the largest 32-bit integer')
  badRequest(t, () => parseInteger('-2147483649', 'b_size'), 'one below the smallest 32-bit integer')
  badRequest(t, () => parseInteger('1e3', 'b_size'), 'an exponent')
  badRequest(t, () => parseInteger('', 'b_size'), 'an empty string')
})

tap.test('parseDate: ISO dates within the years 1–9999', async t => {
  t.equal(parseDate('2025-01-02', 'created').toISOString(), '2025-01-02T00:00:00.000Z')
  t.equal(parseDate('2025-01-02T03:04:05+02:00', 'created').toISOString(), '2025-01-02T01:04:05.000Z', 'offsets are honoured')
  t.equal(parseDate('0001-01-01T00:00:00Z', 'created').getUTCFullYear(), 1, 'year 1')
  t.equal(parseDate('9999-12-31T23:59:59Z', 'created').getUTCFullYear(), 9999, 'year 9999')
  badRequest(t, () => parseDate('0000-12-31T23:59:59Z', 'created'), 'year 0')
  badRequest(t, () => parseDate('+010000-01-01T00:00:00Z', 'created'), 'year 10000')
  badRequest(t, () => parseDate('2025-02-30x', 'created'), 'not a date')
})

tap.test('b_start and b_size', async t => {
  t.same(batchOf({}), { start: 0, size: 25 }, 'defaults: 0 and 25')
  t.same(batchOf({ b_start: '5', b_size: '10' }), { start: 5, size: 10 })
  t.same(batchOf({ b_size: '500' }), { start: 0, size: 500 }, 'at most 500')
  t.same(batchOf({ b_size: '501' }), { start: 0, size: 500 }, 'one more is cut to 500')
  t.same(batchOf({ b_size: '1' }), { start: 0, size: 1 }, 'the smallest page')
  t.same(batchOf({ b_size: '0' }), { start: 0, size: 25 }, '0 means not given (as in a JSON body)')
  t.same(batchOf({ b_start: '-1' }), { start: 0, size: 25 }, 'a negative start is the first page')
  t.same(batchOf({ b_size: ['3', '4'] }), { start: 0, size: 3 }, 'a repeated parameter: the first')
  badRequest(t, () => batchOf({ b_size: 'x' }), 'b_size not an integer')
  badRequest(t, () => batchOf({ b_start: '1.0' }), 'b_start not an integer')
})

tap.test('batching links only when there is more than one page', async t => {
  const url = 'http://h/@search?q=1&b_size=2'
  t.equal(batchingLinks(url, 2, { start: 0, size: 2 }), undefined, 'a full single page')
  t.same(batchingLinks(url, 3, { start: 0, size: 2 }), {
    '@id': url, first: 'http://h/@search?b_start=0&q=1&b_size=2', last: 'http://h/@search?b_start=2&q=1&b_size=2', next: 'http://h/@search?b_start=2&q=1&b_size=2'
  }, 'one result more')
  t.same(batchingLinks('http://h/@search?b_start=3&b_size=2', 5, { start: 3, size: 2 }), {
    '@id': 'http://h/@search?b_start=3&b_size=2',
    first: 'http://h/@search?b_start=0&b_size=2',
    last: 'http://h/@search?b_start=4&b_size=2',
    prev: 'http://h/@search?b_start=1&b_size=2'
  }, 'an unaligned start that reaches the end: prev steps back by b_size, no next')
})
