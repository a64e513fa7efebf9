/**
 * Deterministic conference talks for the benchmark: the same index always
 * gives the same talk, so that every run (and every machine) searches the
 * same corpus. Words follow a Zipf-like law, as in real text, so that a
 * full-text query can be common or rare on purpose.
 */

// Ordered from most to least frequent: the rank decides how often a word occurs.
export const WORDS = `api python plone web data content search rest volto react fastify postgresql solr server client
  performance security testing deployment docker kubernetes cloud design editor theme plugin addon workflow
  migration upgrade cache index query schema json http async queue worker event stream database node javascript
  typescript frontend backend user experience accessibility community sprint release version package registry
  training keynote lightning beginner advanced professional architecture pattern service micro monolith
  container pipeline continuous integration delivery monitoring logging tracing metrics dashboard latency
  throughput memory profile benchmark optimisation scaling cluster replica shard transaction lock consistency
  durability backup restore archive document image media video audio translation language locale
  multilingual navigation menu portlet tile block layout grid responsive mobile browser standard protocol
  authentication authorization token session cookie password encryption certificate proxy gateway router
  endpoint resource collection pagination batching sorting filtering facet highlight relevance ranking
  stemming tokenizer analyzer synonym spelling suggestion autocomplete vocabulary taxonomy keyword tag
  metadata catalog traversal acquisition permission role group member owner reviewer publisher editorial
  review publish retract draft private pending published history audit compliance privacy governance
  license openness foundation ecosystem conference speaker audience room schedule agenda venue travel
  sponsor volunteer mentor newcomer onboarding documentation tutorial example recipe cookbook story lesson
  failure incident outage recovery resilience chaos experiment hypothesis measurement statistics
  visualisation report notebook science research education university government enterprise startup
  nonprofit healthcare finance retail manufacturing energy transport agriculture climate`.split(/\s+/).filter(Boolean)

const FIRST_NAMES = ['Ada', 'Alan', 'Barbara', 'Claude', 'Dana', 'Edsger', 'Frances', 'Grace', 'Hedy', 'Ivan', 'Joan', 'Ken',
  'Linus', 'Margaret', 'Niklaus', 'Ole', 'Radia', 'Sophie', 'Tim', 'Vint']
const LAST_NAMES = ['Lovelace', 'Turing', 'Liskov', 'Shannon', 'Scott', 'Dijkstra', 'Allen', 'Hopper', 'Lamarr', 'Sutherland',
  'Clarke', 'Thompson', 'Torvalds', 'Hamilton', 'Wirth', 'Dahl', 'Perlman', 'Wilson', 'Berners-Lee', 'Cerf']
const KINDS = ['Talk', 'Talk', 'Talk', 'Talk', 'Training', 'Keynote', 'Lightning Talk', 'Lightning Talk']
const AUDIENCES = ['Beginner', 'Advanced', 'Professionals']
const CONFERENCE_START = Date.UTC(2026, 9, 12, 9, 0)

/**
 * Words of exactly known frequency, outside the Zipf vocabulary (no other
 * word starts with them, so prefix matching finds only them): one in every
 * talk, one in every tenth (numbers ending in 0, which the seeder publishes).
 */
export const WORD_IN_EVERY_TALK = 'omnibench'
export const WORD_IN_TENTH_OF_TALKS = 'decibench'

/** The seeded talks' owners (bench/seed.mjs): Members `speaker-0` … `speaker-49`, talk n's is n's remainder. */
export const SPEAKERS = 50
export const speakerOf = n => `speaker-${n % SPEAKERS}`

/** mulberry32: a small, good, seedable generator (numbers in [0, 1)). */
export function seededRandom (seed) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6D2B79F5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

// Cumulative Zipf weights (s = 1) over WORDS, for sampling by binary search.
const cumulative = []
for (let k = 0, sum = 0; k < WORDS.length; k++) cumulative.push(sum += 1 / (k + 1))
const total = cumulative[cumulative.length - 1]

function zipfWord (next) {
  const x = next() * total
  let lo = 0
  let hi = cumulative.length - 1
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if (cumulative[mid] < x) lo = mid + 1
    else hi = mid
  }
  return WORDS[lo]
}

/** The subjects of the talks: the 30 most frequent words, each talk two of them drawn alike. */
export const SUBJECTS = WORDS.slice(0, 30)

const words = (next, n) => Array.from({ length: n }, () => zipfWord(next)).join(' ')
const pick = (next, list) => list[Math.floor(next() * list.length)]
const capitalise = text => text.charAt(0).toUpperCase() + text.slice(1)

/**
 * Talk number `n` as a client would POST it. `label` goes into the title,
 * which makes it (and so the id the service derives from it) unique.
 */
export function talkBody (n, label = `#${n}`) {
  const next = seededRandom(n + 1)
  const kind = pick(next, KINDS)
  const first = pick(next, FIRST_NAMES)
  const last = pick(next, LAST_NAMES)
  const start = CONFERENCE_START + Math.floor(next() * 3) * 86400000 + Math.floor(next() * 16) * 1800000
  const minutes = kind === 'Lightning Talk' ? 5 : kind === 'Training' ? 180 : 30
  const audience = AUDIENCES.filter(() => next() < 0.5)
  return {
    '@type': 'talk',
    title: `${capitalise(words(next, 3 + Math.floor(next() * 4)))} ${label}`,
    description: `${capitalise(words(next, 12 + Math.floor(next() * 15)))} ${WORD_IN_EVERY_TALK}${n % 10 === 0 ? ` ${WORD_IN_TENTH_OF_TALKS}` : ''}.`,
    type_of_talk: kind,
    details: { data: `<p>${capitalise(words(next, 40))}.</p><p>${capitalise(words(next, 40))}.</p>`, 'content-type': 'text/html' },
    audience: audience.length > 0 ? audience : [pick(next, AUDIENCES)],
    speaker: `${first} ${last}`,
    email: `${first}.${last}@example.org`.toLowerCase(),
    subjects: [pick(next, SUBJECTS), pick(next, SUBJECTS)],
    start: new Date(start).toISOString(),
    end: new Date(start + minutes * 60000).toISOString()
  }
}

/** A subject of many talks. */
export const COMMON_SUBJECT = SUBJECTS[1]

/** The conference's first day: a date range holding about a third of the talks (they start over three days). */
export const FIRST_DAY = [new Date(CONFERENCE_START).toISOString().slice(0, 10), new Date(CONFERENCE_START + 86400000).toISOString().slice(0, 10)]

/**
 * Full-text queries of known selectivity: a very common word, a middling
 * one, a rare one and two words together.
 */
export const FULL_TEXT_QUERIES = [WORDS[0], WORDS[15], WORDS[150], `${WORDS[3]} ${WORDS[10]}`]
