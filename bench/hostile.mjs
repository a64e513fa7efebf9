/**
 * The largest writes a Member may send that the service accepts, for the
 * `get-talk-hostile-writes` scenario (docs/api.md, "Bounded work per
 * request"; the limits are the defaults of core/content/richtext.ts,
 * core/security/body-bounds.ts and the configuration): each costs the
 * service as much as any accepted request can, and none may hold it so that
 * others wait.
 */
import { talkBody } from './talks.mjs'

/** Characters of markup a rich text may send: 16 for each character of text its field allows. */
const DETAILS_MARKUP = 16 * 2000
const BIOGRAPHY_MARKUP = 16 * 1000
/** Elements a rich text may nest. */
const MARKUP_DEPTH = 64
const IMPORT_ITEMS = 1000
const BODY_LIMIT = 16 * 1024 * 1024
const IMAGE_MAX_BYTES = 8 * 1024 * 1024

/** `unit` repeated to `chars` characters. */
const fill = (unit, chars) => unit.repeat(Math.floor(chars / unit.length))

/** A valid 8 × 8 JPEG (SOI, tables, frame, scan, EOI), written by test/image-samples.ts. */
export const SMALL_JPEG = Buffer.from('/9j/2wBDAAEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQH/wAALCAAIAAgBAREA/8QAFQABAQAAAAAAAAAAAAAAAAAAAAv/xAAUEAEAAAAAAAAAAAAAAAAAAAAA/9oACAEBAAA/AD//2Q==', 'base64')

/**
 * The largest image accepted, as costly to walk as it can be: after its SOI,
 * two million empty comment segments (a walk step each), then the image.
 */
function costliestImage () {
  const segments = Buffer.alloc(IMAGE_MAX_BYTES - SMALL_JPEG.length, Buffer.from([0xff, 0xfe, 0x00, 0x02]))
  return Buffer.concat([SMALL_JPEG.subarray(0, 2), segments.subarray(0, segments.length - segments.length % 4), SMALL_JPEG.subarray(2)])
}

/** Where a request's number goes into its titles, so that each request's ids are its own (a clash costs a search for a free id). */
export const NUMBER = '@@n@@'

/** Each kind of hostile write: where it is sent, and its body as JSON text with NUMBER in its titles. */
export function hostileWrites () {
  const talk = (label, fields) => JSON.stringify({ ...talkBody(0, `${label} ${NUMBER}`), ...fields })
  // Items as large as BODY_LIMIT allows, their rich text as markup-heavy as accepted.
  const room = Math.floor(BODY_LIMIT / IMPORT_ITEMS) - 1200
  const items = Array.from({ length: IMPORT_ITEMS }, (_, i) => ({ ...talkBody(i, `import ${NUMBER}-${i}`), details: `<p>${i}</p>` + fill('<em>x</em>', room), transitions: ['submit'] }))
  return [
    // Two characters of text in 51 of markup, one in 17: within both limits of text and of markup.
    { what: 'rich text at its limits', path: '/talks', template: talk('rich', { details: fill('<p><b>x</b><a href="https://example.org/">y</a></p>', DETAILS_MARKUP), speaker_biography: fill('<li><i></i>y</li>', BIOGRAPHY_MARKUP) }) },
    // The deepest accepted: 63 levels of <div>, and the empty <em>s inside them the 64th.
    { what: 'the deepest nesting', path: '/talks', template: talk('deep', { details: '<div>'.repeat(MARKUP_DEPTH - 1) + fill('<em></em>', DETAILS_MARKUP - 5 * MARKUP_DEPTH) }) },
    { what: 'the largest @import', path: '/talks/@import', template: JSON.stringify({ items }) },
    { what: 'the largest image', path: '/talks', template: talk('image', { image: { data: costliestImage().toString('base64'), encoding: 'base64', filename: 'portrait.jpg', 'content-type': 'image/jpeg' } }) }
  ]
}
