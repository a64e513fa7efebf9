import fc from 'fast-check'
import t from 'tap'
import { ApiError } from '../../core/errors.js'
import { parseJsonBody, type JsonBounds } from '../../core/security/json-body.js'
import { untrustedJsonProblems } from '../../core/security/untrusted-input.js'

/**
 * A request body is read as JSON.parse reads it, however it is cut into
 * pieces: the oracle is JSON.parse itself, then the untrusted-input walk of
 * the whole document (prototype keys, NUL…), on every JSON value fast-check
 * makes, laid out with any whitespace, and on texts one edit away from JSON
 * (which both accept or both refuse). Pieces of a few characters make every
 * container "large", so that the member-by-member assembly runs on all of them.
 */
const UNBOUNDED = { values: Number.MAX_SAFE_INTEGER }

/** A JSON text of `value` laid out with `space` (JSON.stringify takes any whitespace up to 10 characters). */
const layout = fc.tuple(fc.jsonValue({ maxDepth: 6 }), fc.constantFrom(undefined, 1, '\t', ' \r\n', '\n\n\n\n\n\n\n\n\n\n'))
  .map(([value, space]) => JSON.stringify(value, null, space))

async function outcome (text: string, pieceChars: number): Promise<{ value: unknown } | { refused: number }> {
  try {
    return { value: await parseJsonBody(text, { ...UNBOUNDED, pieceChars }) }
  } catch (err) {
    if (!(err instanceof ApiError)) throw err
    return { refused: err.statusCode }
  }
}

/** How `parseJsonBody` refused a text: its status, type, message and field errors. */
async function refusal (text: string, bounds: JsonBounds = UNBOUNDED): Promise<Pick<ApiError, 'statusCode' | 'type' | 'message' | 'errors'> | 'accepted'> {
  try {
    await parseJsonBody(text, bounds)
    return 'accepted'
  } catch (err) {
    if (!(err instanceof ApiError)) throw err
    return { statusCode: err.statusCode, type: err.type, message: err.message, errors: err.errors }
  }
}

function oracle (text: string): { value: unknown } | { refused: number } {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return { refused: 400 }
  }
  return untrustedJsonProblems(value).length > 0 ? { refused: 400 } : { value }
}

t.test('every JSON text reads as JSON.parse reads it, in pieces of any size', async t => {
  await fc.assert(fc.asyncProperty(layout, fc.integer({ min: 1, max: 64 }), async (text, pieceChars) => {
    t.same(await outcome(text, pieceChars), oracle(text), text)
  }), { numRuns: 400 })
})

t.test('a text one edit away from JSON is refused exactly when JSON.parse refuses it', async t => {
  const edit = fc.tuple(layout, fc.nat(), fc.constantFrom('', ',', ':', '[', ']', '{', '}', '"', '\\', ' ', '1', 'e', '-', 'x', '\u0000', '\t', '\n'), fc.boolean())
    .map(([text, at, insert, replace]) => {
      const i = text.length === 0 ? 0 : at % text.length
      return text.slice(0, i) + insert + text.slice(replace ? i + 1 : i)
    })
  await fc.assert(fc.asyncProperty(edit, fc.integer({ min: 1, max: 64 }), async (text, pieceChars) => {
    t.same(await outcome(text, pieceChars), oracle(text), JSON.stringify(text))
  }), { numRuns: 1000 })
})

t.test('a long string read as it is: a control character anywhere in it is refused, as JSON.parse refuses it', async t => {
  for (let pieceChars = 1; pieceChars <= 4; pieceChars++) {
    for (let at = 0; at < 10; at++) {
      const text = `{"a": "${'x'.repeat(at)}\u0001${'x'.repeat(9 - at)}", "b": ["${'y'.repeat(at)}\t"]}`
      t.same(await outcome(text, pieceChars), { refused: 400 }, `at ${at}, in pieces of ${pieceChars}`)
    }
  }
  t.same(await outcome('{"a": "' + 'x'.repeat(20) + '"}', 3), { value: { a: 'x'.repeat(20) } }, 'and read whole when it has none')
})

t.test('a key is an own property whatever it is, and the last of a repeated key wins, as with JSON.parse', async t => {
  for (const text of ['{"a": 1, "b": [2, 3], "a": {"c": 4}}', '{"\\u0061": 1, "a": 2}', '[{"x": [], "y": {}}, {"x": "}{][,:"}]']) {
    for (const pieceChars of [1, 3, 1000]) t.same(await outcome(text, pieceChars), oracle(text), `${text} in pieces of ${pieceChars}`)
  }
})

t.test('the bounds are checked before anything is parsed', async t => {
  const values = (n: number): string => JSON.stringify({ items: Array(n - 2).fill(0) })
  t.same(await outcome(values(100), 8).then(o => 'value' in o), true, 'exactly as many values as allowed')
  t.match(await refusal(values(100), { values: 99 }), { statusCode: 413, type: 'PayloadTooLarge' }, 'one more')
  const nested = (depth: number): string => '{"title": ' + '['.repeat(depth) + ']'.repeat(depth) + '}'
  t.same(await outcome(nested(31), 4), oracle(nested(31)), '32 levels (the object and 31 arrays)')
  t.match(await refusal(nested(32)), { statusCode: 400, errors: [{ field: 'title', message: 'The value is nested deeper than 32 levels.' }] })
  t.match(await refusal('['.repeat(1_000_000)), { statusCode: 400, message: /nested deeper than 32 levels/ }, 'a million open brackets, refused at the 33rd')
  t.match(await refusal(`[${'9'.repeat(1001)}]`), { statusCode: 400, message: /longer than 1000 characters/ })
  t.same(await outcome(`[${'9'.repeat(1000)}]`, 4), oracle(`[${'9'.repeat(1000)}]`), 'a number of 1000 digits')
})

t.test('what no handler should meet is refused in every piece, naming its top-level field', async t => {
  const text = '{"title": "ok", "subjects": ["a", "b\\u0000"], "items": [{"deep": {"__proto__": 1}}]}'
  for (const pieceChars of [1, 10, 1000]) {
    const refused = await parseJsonBody(text, { ...UNBOUNDED, pieceChars }).catch((err: unknown) => err) as ApiError
    t.same([refused.statusCode, refused.errors?.map(e => `${e.field}: ${e.message}`).sort()],
      [400, ["items: The key '__proto__' is not allowed.", 'subjects: The text contains a NUL character.']], `in pieces of ${pieceChars}`)
  }
  t.match(await refusal('{"__proto__": {"x": 1}, "y": 2}', { ...UNBOUNDED, pieceChars: 2 }), { statusCode: 400, errors: [{ field: '__proto__' }] }, 'a key of the outer object')
})
