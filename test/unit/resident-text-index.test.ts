import t from 'tap'
import pg from 'pg'
import { searchableWords } from '../../core/catalog/folding.js'
import { renderTsquery } from '../../core/catalog/tsquery.js'
import { Bits } from '../../core/catalog/resident/bits.js'
import { TextIndex } from '../../core/catalog/resident/text-index.js'
import { parseFullText } from '../../core/query/text.js'

/**
 * The resident text index against PostgreSQL itself: random documents of a
 * small Zipfian vocabulary (words repeat, phrases recur, prefixes overlap;
 * numbers; two documents past position 16383 with words repeated more than
 * 256 times), random SearchableText, and every answer compared with what
 * `searchable @@ to_tsquery('simple', …)` finds, before and after updates.
 * The generator is seeded: TEXT_INDEX_SEED=<seed> repeats a run.
 */
const DATABASE_URL = process.env.TEST_DATABASE_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const seed = Number(process.env.TEXT_INDEX_SEED ?? Math.floor(Math.random() * 2 ** 31))

/** mulberry32: small, fast, and the same sequence for a seed on every platform. */
function generator (state: number): () => number {
  return () => {
    state = (state + 0x6d2b79f5) | 0
    let x = Math.imul(state ^ (state >>> 15), 1 | state)
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x
    return ((x ^ (x >>> 14)) >>> 0) / 2 ** 32
  }
}

const random = generator(seed)
const below = (n: number): number => Math.floor(random() * n)
const pick = <T>(items: readonly T[]): T => items[below(items.length)]

/**
 * Words sharing stems (so that prefixes find several), numbers, a number in
 * scientific notation (one lexeme) and one running into a letter (two), a
 * word with an accent (folded to ASCII) and one in Greek (not ASCII).
 */
const STEMS = ['plo', 'fast', 'sol', 'data', 'py', 'con', 'al', 'be', 'x', 'q']
const ENDINGS = ['', 'ne', 'nes', 'x', 'tify', 'r', 'ra', '1', '42', 'ro', 'ster', 'a']
const VOCABULARY = [
  ...STEMS.flatMap(stem => ENDINGS.map(ending => stem + ending)),
  '0', '7', '42', '2024', '007', '123456', '1e5', '3e4b', 'Müller', 'κόσμος', 'the', 'of', 'and', 'a'
]
// In a random order (Fisher–Yates), of which a Zipfian pick favours the first: word i has weight 1 / (i + 1).
for (let i = VOCABULARY.length - 1; i > 0; i--) {
  const j = below(i + 1)
  const word = VOCABULARY[i]
  VOCABULARY[i] = VOCABULARY[j]
  VOCABULARY[j] = word
}
const cumulative: number[] = []
for (let i = 0, sum = 0; i < VOCABULARY.length; i++) cumulative.push(sum += 1 / (i + 1))
const zipf = (limit = VOCABULARY.length): string => {
  const u = random() * cumulative[limit - 1]
  let i = 0
  while (cumulative[i] < u) i++
  return VOCABULARY[i]
}

const textOf = (length: number, limit?: number): string => Array.from({ length }, () => zipf(limit)).join(pick([' ', ', ', ' - ']))

interface Doc { id: number, title: string, rest: string | null }

/** A document of 1–8 title words and 0–120 more; now and then an empty one. */
function randomDoc (id: number): Doc {
  if (random() < 0.03) return { id, title: '', rest: '' }
  return { id, title: textOf(1 + below(8)), rest: textOf(below(121)) }
}

/** The folded words of a document, in position order (to find phrases that occur). */
const wordsOf = (doc: Doc): string[] => searchableWords(`${doc.title} ${doc.rest ?? ''}`).split(' ').filter(w => w !== '')

/** A random SearchableText: words, prefixes, phrases (some taken from the documents), negations, OR, and the odd token. */
function randomQuery (docs: Doc[]): string {
  const part = (): string => {
    const r = random()
    const word = (): string => random() < 0.05 ? `zz${below(100)}` : zipf()
    const prefix = (): string => { const w = searchableWords(zipf()); return `${w.slice(0, 1 + below(Math.max(1, w.length - 1)))}*` }
    const found = (): string[] => {
      const words = wordsOf(pick(docs))
      if (words.length < 3) return [word(), word()]
      const at = below(words.length - 2)
      return words.slice(at, at + 2 + below(2))
    }
    if (r < 0.30) return word()
    if (r < 0.38) return `-${word()}`
    if (r < 0.42) return `NOT ${word()}`
    if (r < 0.55) return prefix()
    if (r < 0.70) return `"${found().join(' ')}"`
    if (r < 0.76) { const words = found(); return `"${words.slice(0, -1).join(' ')} ${words[words.length - 1].slice(0, 1 + below(2))}*"` }
    if (r < 0.82) return `"${word()} ${word()}"`
    if (r < 0.87) return `-"${found().join(' ')}"`
    if (r < 0.92) return `${word()}:${word()}`
    return word().toUpperCase()
  }
  const parts = Array.from({ length: 1 + below(4) }, part)
  return parts.reduce((query, next) => `${query}${random() < 0.3 ? ' OR ' : ' '}${next}`)
}

/** Whether a tsquery holds a word the index leaves to PostgreSQL (not ASCII letters and digits, a number running into letters, too long). */
const unsure = (tsquery: string): boolean => (tsquery.match(/[^\s()&|!<>:*-]+/gu) ?? [])
  .some(word => !/^[a-z0-9]{1,200}$/.test(word) || /^[0-9]+e[0-9]+[a-z]/.test(word))

const SEARCHABLE = "setweight(to_tsvector('simple', u.title), 'A') || setweight(to_tsvector('simple', u.rest), 'B')"

t.test('matches finds what PostgreSQL finds', async t => {
  t.comment(`seed ${seed} (TEXT_INDEX_SEED=${seed} repeats this run)`)
  const client = new pg.Client({ connectionString: DATABASE_URL })
  await client.connect()
  t.teardown(async () => { await client.end() })
  await client.query('CREATE TEMP TABLE text_index_docs (id integer PRIMARY KEY, searchable tsvector)')

  // Arena segments of 4 096 entries: these few hundred documents fill many, their updates compact them, and the longest texts get segments of their own.
  const index = new TextIndex(undefined, 4096)
  const universe = new Bits()
  const docs = new Map<number, Doc>()

  /** Writes documents to PostgreSQL (text folded as the catalogue folds it; a null rest makes a NULL tsvector) and their tsvector text to the index. */
  const write = async (batch: Doc[]): Promise<void> => {
    await client.query(`INSERT INTO text_index_docs SELECT u.id, ${SEARCHABLE}
      FROM unnest($1::integer[], $2::text[], $3::text[]) AS u(id, title, rest)
      ON CONFLICT (id) DO UPDATE SET searchable = EXCLUDED.searchable`,
    [batch.map(d => d.id), batch.map(d => searchableWords(d.title)), batch.map(d => d.rest === null ? null : searchableWords(d.rest))])
    const { rows } = await client.query<{ id: number, searchable: string | null }>('SELECT id, searchable::text AS searchable FROM text_index_docs WHERE id = ANY($1::integer[])', [batch.map(d => d.id)])
    for (const row of rows) {
      index.set(row.id, row.searchable)
      universe.add(row.id)
    }
    for (const doc of batch) docs.set(doc.id, doc)
  }
  const remove = async (ids: number[]): Promise<void> => {
    await client.query('DELETE FROM text_index_docs WHERE id = ANY($1::integer[])', [ids])
    for (const id of ids) {
      index.remove(id)
      universe.delete(id)
      docs.delete(id)
    }
  }

  /** Compares the index's answers to PostgreSQL's for random queries, over every document and over a random half of them. */
  const compare = async (label: string, count: number): Promise<void> => {
    // Some that are always asked: words left to PostgreSQL, phrases of the long documents.
    const fixed = ['κόσμος plone', '3e4b OR plone', '"echo echo"', '"echo echo echo" -plone', 'echo*']
    const queries = [...fixed, ...Array.from({ length: count - fixed.length }, () => randomQuery([...docs.values()]))]
    const tsqueries = queries.map(q => renderTsquery(parseFullText(q)))
    const { rows } = await client.query<{ i: string, ids: number[] }>(`SELECT q.i, coalesce(array_agg(d.id ORDER BY d.id) FILTER (WHERE d.id IS NOT NULL), '{}') AS ids
      FROM unnest($1::text[]) WITH ORDINALITY AS q(tsquery, i)
      LEFT JOIN text_index_docs d ON q.tsquery IS NOT NULL AND d.searchable @@ to_tsquery('simple', q.tsquery)
      GROUP BY q.i`, [tsqueries])
    const expected = new Map(rows.map(r => [Number(r.i) - 1, r.ids]))
    const half = Bits.of(universe.toArray().filter(() => random() < 0.5))
    const failures: string[] = []
    let found = 0
    let unsureCount = 0
    queries.forEach((query, i) => {
      const tsquery = tsqueries[i]
      const all = expected.get(i) ?? []
      for (const [within, want] of [[universe, all], [half, all.filter(id => half.has(id))]] as const) {
        const answer = index.matches(parseFullText(query), within)
        if (tsquery !== null && unsure(tsquery)) {
          if (answer !== null) failures.push(`${JSON.stringify(query)} → ${tsquery}: answered, but should be left to PostgreSQL`)
          unsureCount++
          continue
        }
        if (answer === null) {
          failures.push(`${JSON.stringify(query)} → ${tsquery}: left to PostgreSQL`)
          continue
        }
        const got = answer.toArray()
        if (got.length > 0) found++
        if (got.join() !== want.join()) {
          failures.push(`${JSON.stringify(query)} → ${tsquery}: missing ${want.filter(id => !answer.has(id)).join(' ')}; extra ${got.filter(id => !want.includes(id)).join(' ')}`)
        }
      }
    })
    t.same(failures.slice(0, 10), [], `${label}: ${count} queries as PostgreSQL answers them (seed ${seed})`)
    await compareRanks(label, tsqueries)
    // Not a vacuous comparison: most queries find something, and a few are left to PostgreSQL.
    t.ok(found > count / 2, `${label}: ${found} of ${count * 2} answers find documents`)
    t.ok(unsureCount > 0, `${label}: ${unsureCount} answers left to PostgreSQL`)
  }

  /**
   * The index's ts_rank_cd of every match of every query it ranks (words and
   * prefixes joined by & and |) against PostgreSQL's, to the float4.
   */
  const compareRanks = async (label: string, tsqueries: Array<string | null>): Promise<void> => {
    const { rows } = await client.query<{ i: string, id: number, rank: number }>(`SELECT q.i, d.id, ts_rank_cd(d.searchable, to_tsquery('simple', q.tsquery)) AS rank
      FROM unnest($1::text[]) WITH ORDINALITY AS q(tsquery, i)
      JOIN text_index_docs d ON q.tsquery IS NOT NULL AND d.searchable @@ to_tsquery('simple', q.tsquery)`, [tsqueries])
    const byQuery = new Map<number, Map<number, number>>()
    for (const row of rows) {
      const ranks = byQuery.get(Number(row.i) - 1) ?? new Map<number, number>()
      ranks.set(row.id, Math.fround(row.rank))
      byQuery.set(Number(row.i) - 1, ranks)
    }
    const failures: string[] = []
    let ranked = 0
    let left = 0
    let queriesRanked = 0
    tsqueries.forEach((tsquery, i) => {
      const want = byQuery.get(i)
      if (tsquery === null || want === undefined || unsure(tsquery)) return
      const got = index.rank(tsquery, [...want.keys()])
      const plain = !/<->|!/.test(tsquery)
      if (got === null) {
        if (plain) failures.push(`${tsquery}: not ranked, though of words joined by & and |`)
        return
      }
      if (!plain) failures.push(`${tsquery}: ranked, though it holds a phrase or a negation`)
      queriesRanked++
      for (const [id, rank] of want) {
        const mine = got.get(id)
        if (mine === undefined) { left++; continue }
        ranked++
        if (mine !== rank) failures.push(`${tsquery}, document ${id}: ${mine}, PostgreSQL ${rank}`)
      }
    })
    t.same(failures.slice(0, 10), [], `${label}: ranks of ${ranked} matches of ${queriesRanked} queries as PostgreSQL's (seed ${seed})`)
    // Not vacuous: most matches are ranked here; the few left (positions with a gap: past 16383, a word more than 256 times) go to PostgreSQL.
    t.ok(ranked > 10 * left && queriesRanked > tsqueries.length / 10, `${label}: ${ranked} ranked, ${left} left to PostgreSQL`)
  }

  const initial = Array.from({ length: 400 }, (_, id) => randomDoc(id))
  // Past position 16383, words repeated more than 256 times (of the 20 commonest words; of all); one word 301 times; every other word one word 300 times.
  initial[7] = { id: 7, title: textOf(5), rest: textOf(17_000, 20) }
  initial[8] = { id: 8, title: textOf(3), rest: textOf(16_500) }
  initial[9] = { id: 9, title: 'echo', rest: Array(300).fill('echo').join(' ') }
  initial[11] = { id: 11, title: textOf(2), rest: Array.from({ length: 600 }, (_, i) => i % 2 === 0 ? 'echo' : zipf()).join(' ') }
  // A NULL tsvector matches nothing, not even a negation.
  initial[10] = { id: 10, title: 'plone', rest: null }
  for (let i = 0; i < initial.length; i += 100) await write(initial.slice(i, i + 100))
  t.ok(index.byteSize > 0, `${index.byteSize} bytes`)
  await compare('loaded', 300)

  // Updates: most documents rewritten (the arena is compacted on the way), some removed, some added, NULL and empty swapped.
  for (let round = 1; round <= 2; round++) {
    const ids = [...docs.keys()]
    await write(ids.filter(() => random() < 0.6).map(id => randomDoc(id)))
    await write([{ id: 7, title: textOf(2), rest: random() < 0.5 ? textOf(17_000, 10) : textOf(30) }, { id: 10, title: 'plone', rest: round === 1 ? 'text' : null }])
    await remove(ids.filter(id => id !== 7 && id !== 10 && random() < 0.15))
    await write(Array.from({ length: 40 }, (_, i) => randomDoc(400 + round * 100 + i)))
    await compare(`after updates, round ${round}`, 200)
  }
})

t.test('matches leaves to PostgreSQL what it cannot be sure of', async t => {
  const index = new TextIndex()
  index.set(0, "'plone':1A 'kosmos':2B '1e5':3B 'x':4B")
  index.set(1, "'a':1 'b':2")
  index.set(2, "'a' 'b' 'c':1")
  const universe = Bits.of([0, 1, 2])
  const answer = (text: string): number[] | null => index.matches(parseFullText(text), universe)?.toArray() ?? null
  t.equal(answer('κόσμος'), null, 'a word that is not ASCII after folding')
  t.equal(answer('plone OR ελλάδα'), null, 'even as an alternative')
  t.equal(answer('1e5x'), null, 'a number in scientific notation running into letters (PostgreSQL reads `1e5 <-> x`)')
  t.equal(answer('a'.repeat(201)), null, 'a word of more than 200 characters')
  t.same(answer('a'.repeat(200)), [], 'a word of 200 characters is answered')
  t.same(answer('Plöne 1e5'), [0], 'folded to ASCII, and a number in scientific notation alone: answered')
  t.equal(answer('"a b"'), null, 'a phrase to check in a document with a lexeme without positions')
  t.same(answer('a b'), [1, 2], 'words are answered there')
  t.same(answer('"plone kosmos"'), [0], 'a phrase whose words no such document holds all of is answered')
  t.same(answer('*** -'), [], 'nothing searchable: nothing (the catalogue asks for `false`)')
})

t.test('tsvector text is read as PostgreSQL reads it', async t => {
  const client = new pg.Client({ connectionString: DATABASE_URL })
  await client.connect()
  t.teardown(async () => { await client.end() })
  // Printed forms with escapes, and input forms PostgreSQL normalises: lexemes twice, positions out of order, repeated, over 16383, more than 256.
  const many = Array.from({ length: 300 }, (_, i) => 300 - i)
  const literals = [
    "'it''s':1A 'back\\\\slash':2B 'a':3C,5 'b':4D,6 'x':7",
    'a:3,1,2 a:5 b:20000,16383 c:4 d:16383 e:16382',
    `'z':${many.join(',')} 'y':${many.map(p => `${p + 1}A`).join(',')} 'w':290`,
    "'z':2,1,2 z:400,3 y:4 y 'it''s':5"
  ]
  const queries = ['a', 'a*', 'it*', 'back*', 'x', '"a b"', '"b a"', '"a a"', '"c d"', '"b d"', 'z', '"z y"', '"y z"', '"z z"', '"z y z"', '"e b"', '"e d"', '"z w"', '"y w"', '"z y w"', '"it s"', '-a', '-"z y"']
  const fromInput = new TextIndex()
  const fromOutput = new TextIndex()
  for (const [doc, literal] of literals.entries()) {
    const { rows: [row] } = await client.query<{ text: string }>('SELECT $1::tsvector::text AS text', [literal])
    fromInput.set(doc, literal)
    fromOutput.set(doc, row.text)
  }
  const universe = Bits.of(literals.keys())
  for (const query of queries) {
    const { rows } = await client.query<{ doc: number }>(`SELECT doc - 1 AS doc FROM unnest($1::tsvector[]) WITH ORDINALITY AS v(searchable, doc)
      WHERE searchable @@ to_tsquery('simple', $2) ORDER BY doc`, [literals, renderTsquery(parseFullText(query))])
    const want = rows.map(r => Number(r.doc))
    t.same(fromInput.matches(parseFullText(query), universe)?.toArray(), want, `${query}, from the text as typed`)
    t.same(fromOutput.matches(parseFullText(query), universe)?.toArray(), want, `${query}, from the text PostgreSQL prints`)
  }
  t.throws(() => fromInput.set(9, "'unclosed:1"), /Malformed tsvector/, 'malformed text is refused')
  t.same(fromInput.matches(parseFullText('unclosed*'), universe)?.toArray(), [], 'and changes nothing')
})

t.test('postings move between lists and bitsets as documents come and go', async t => {
  // Against a plain model: a word in every document, one in few, one in most of some ranges of documents and few of others.
  const index = new TextIndex()
  const model = new Map<number, string[]>()
  const local = generator(seed + 1)
  const universe = new Bits()
  const put = (doc: number): void => {
    const words = ['common', ...local() < 0.02 ? ['rare'] : [], ...local() < (doc % 2000 < 1000 ? 0.9 : 0.01) ? ['shifting'] : []]
    model.set(doc, words)
    universe.add(doc)
    index.set(doc, words.map((word, i) => `'${word}':${i + 1}`).sort().join(' '))
  }
  const check = (phase: string): void => {
    for (const word of ['common', 'rare', 'shifting', 'sh*']) {
      const want = [...model].filter(([, words]) => words.includes(word.replace('sh*', 'shifting'))).map(([doc]) => doc).sort((a, b) => a - b)
      t.same(index.matches(parseFullText(word), universe)?.toArray(), want, `${phase}, ${word}: ${want.length} documents`)
    }
  }
  for (let doc = 0; doc < 4000; doc++) put(doc)
  check('loaded')
  // Nearly all removed (bitsets become lists again), a few rewritten.
  for (let doc = 0; doc < 4000; doc++) {
    if (local() < 0.995) {
      index.remove(doc)
      model.delete(doc)
      universe.delete(doc)
    } else if (local() < 0.5) {
      put(doc)
    }
  }
  check('emptied')
  // Filled again past the old numbers (lists become bitsets again, and bitsets grow).
  for (let doc = 4000; doc < 7000; doc++) put(doc)
  check('refilled')
})

t.test('prefixes find every lexeme they begin, however many lexemes came since', async t => {
  // Thousands of overlapping lexemes (past the small list new ones wait in), asked about while they come, against a plain model.
  const index = new TextIndex()
  const local = generator(seed + 2)
  const lexemeOf = (): string => Array.from({ length: 1 + Math.floor(local() * 7) }, () => 'abcd1'[Math.floor(local() * 5)]).join('')
  const model: string[][] = []
  const universe = new Bits()
  const failures: string[] = []
  for (let doc = 0; doc < 3000; doc++) {
    const lexemes = [...new Set(Array.from({ length: 1 + Math.floor(local() * 5) }, lexemeOf))].sort()
    model.push(lexemes)
    universe.add(doc)
    index.set(doc, lexemes.map((lexeme, i) => `'${lexeme}':${i + 1}`).join(' '))
    if (doc % 250 !== 249) continue
    for (const prefix of ['a', 'ab', 'abc', 'abcd', 'd1', '1', 'ca', 'bb', 'dddd', 'c1b', 'aaaaa']) {
      const want = model.flatMap((held, d) => held.some(lexeme => lexeme.startsWith(prefix)) ? [d] : [])
      const got = index.matches(parseFullText(`${prefix}*`), universe)?.toArray()
      if (got?.join() !== want.join()) failures.push(`${prefix}* after ${doc + 1} documents: ${got?.length ?? 'null'} found, ${want.length} hold it`)
    }
  }
  t.same(failures, [], `prefixes over ${new Set(model.flat()).size} lexemes`)
})

/**
 * A plain model of documents for phrases: each document its words at their
 * positions (with gaps now and then), a phrase found where its words stand one
 * after the other; `put` and `remove` change the model and every index alike.
 * Few words, so that every pair is common.
 */
function phraseModel (local: () => number, indexes: TextIndex[]): { put: (doc: number) => void, remove: (doc: number) => void, want: (words: string[]) => number[], universe: Bits, words: () => string[] } {
  const WORDS = ['ab', 'cd', 'ef', 'gh', 'ij']
  const pickLocal = <T>(items: readonly T[]): T => items[Math.floor(local() * items.length)]
  const model = new Map<number, Map<number, string>>()
  const universe = new Bits()
  const holds = (placed: Map<number, string>, words: string[]): boolean =>
    [...placed].some(([position]) => words.every((word, k) => placed.get(position + k) === word))
  return {
    universe,
    put: doc => {
      const placed = new Map<number, string>()
      const gapped = local() < 0.1
      for (let i = 0, position = 1 + Math.floor(local() * 3); i < 1 + Math.floor(local() * 12); i++) {
        placed.set(position, pickLocal(WORDS))
        position += gapped && local() < 0.3 ? 2 : 1
      }
      const positions = new Map<string, number[]>()
      for (const [position, word] of placed) positions.set(word, [...positions.get(word) ?? [], position])
      const tsvector = [...positions].map(([word, at]) => `'${word}':${at.join(',')}`).join(' ')
      model.set(doc, placed)
      universe.add(doc)
      for (const index of indexes) index.set(doc, tsvector)
    },
    remove: doc => {
      model.delete(doc)
      universe.delete(doc)
      for (const index of indexes) index.remove(doc)
    },
    want: words => [...model].filter(([, placed]) => holds(placed, words)).map(([doc]) => doc).sort((a, b) => a - b),
    words: () => Array.from({ length: local() < 0.8 ? 2 : 3 }, () => pickLocal(WORDS))
  }
}

t.test('phrases of common words answer from kept pairs exactly as document by document, through every change', async t => {
  // One index keeps all it reads, one a pair or two (evicting all the time), one none.
  const local = generator(seed + 2)
  const indexes = [new TextIndex(64 * 1024 * 1024), new TextIndex(600), new TextIndex(0)]
  const { put, remove, want, universe, words: phraseWords } = phraseModel(local, indexes)
  let asked = 0
  const ask = (): void => {
    const words = phraseWords()
    const wanted = want(words)
    for (const [i, index] of indexes.entries()) {
      const got = index.matches(parseFullText(`"${words.join(' ')}"`), universe)?.toArray()
      if (JSON.stringify(got) !== JSON.stringify(wanted)) t.fail(`index ${i}, "${words.join(' ')}" after ${asked} questions: ${JSON.stringify(got)} where ${JSON.stringify(wanted)}`)
    }
    asked++
  }
  for (let doc = 0; doc < 300; doc++) put(doc)
  for (let step = 0; step < 3000; step++) {
    const r = local()
    if (r < 0.4) ask()
    else if (r < 0.8) put(Math.floor(local() * 400))
    else remove(Math.floor(local() * 400))
  }
  t.pass(`${asked} phrases asked between 1 800 changes, each answered alike by the model and the three indexes`)
  t.ok(indexes[0].byteSize > indexes[2].byteSize, 'the index with room keeps pairs (it holds more than the one without)')
})

t.test('pairs read in slices while documents change answer exactly for the index as it is when settled', async t => {
  // Documents are set and removed at every pause of the reads, and two reads run at once; a third of the reads are
  // abandoned (the catalogue loaded again meanwhile). What `matches` answers with the settled pairs, and later without
  // them (kept, followed by every change since), must be the model's at that moment.
  const local = generator(seed + 3)
  const indexes = [new TextIndex(64 * 1024 * 1024), new TextIndex(600), new TextIndex(0)]
  const { put, remove, want, universe, words: phraseWords } = phraseModel(local, indexes)
  const change = (): void => {
    for (let n = Math.floor(local() * 4); n > 0; n--) {
      if (local() < 0.7) put(Math.floor(local() * 4000))
      else remove(Math.floor(local() * 4000))
    }
  }
  // Due at every other turn of a read: a pause after most slices (a slice is 64 words of 32 documents).
  const slicer = { due: () => local() < 0.5, pause: async () => { await new Promise(resolve => setImmediate(resolve)); change() } }
  let asked = 0
  let read = 0
  const check = (index: TextIndex, i: number, words: string[], pairs?: ReadonlyMap<number, Bits>): void => {
    const got = index.matches(parseFullText(`"${words.join(' ')}"`), universe, pairs)?.toArray()
    const wanted = want(words)
    if (JSON.stringify(got) !== JSON.stringify(wanted)) {
      const missing = wanted.filter(doc => got?.includes(doc) !== true)
      const extra = got?.filter(doc => !wanted.includes(doc))
      t.fail(`index ${i}, "${words.join(' ')}"${pairs === undefined ? ' from kept pairs' : ''} after ${asked} questions: missing ${JSON.stringify(missing)}, extra ${JSON.stringify(extra)}`)
    }
    asked++
  }
  const ask = async (index: TextIndex, i: number): Promise<void> => {
    const words = phraseWords()
    const toRead = index.pairsToRead(parseFullText(`"${words.join(' ')}"`))
    read += toRead.length
    const reading = await index.readPairs(toRead, slicer)
    if (local() < 0.3) {
      reading.abandon()
      return
    }
    check(index, i, words, reading.settle())
    await slicer.pause()
    check(index, i, words)
  }
  for (let doc = 0; doc < 3000; doc++) put(doc)
  for (let round = 0; round < 150; round++) {
    await Promise.all(indexes.flatMap((index, i) => [ask(index, i), ask(index, i)]))
    // Every read settled or abandoned: no index goes on noting changes for reads that ended.
    for (const index of indexes) if ((index as unknown as { reads: number }).reads !== 0) t.fail('a read was left open')
  }
  t.ok(read > 100, `${read} pairs read in slices, ${asked} phrases asked after them, each answered as the model does`)
})
