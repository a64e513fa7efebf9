/** What a file field stores of its upload (core/content/validation.ts). */
export interface FileMeta { filename: string | null, 'content-type': string, size: number }

/**
 * The types a browser shows without running anything of the file's in the
 * service's origin: images other than SVG (which can carry scripts), PDF,
 * audio, video and plain text. Anything else is an attachment even when
 * asked to be shown (`@@display-file`): HTML uploaded by an editor must not
 * run as the site.
 */
export const SHOWN_TYPES = /^(?:image\/(?:png|jpeg|gif|webp)|application\/pdf|audio\/[a-z0-9.+-]+|video\/[a-z0-9.+-]+|text\/plain)$/

/** RFC 5987's attr-char: what `filename*` may hold unescaped. */
const escapeHeaderValue = (text: string): string =>
  encodeURIComponent(text.toWellFormed()).replace(/['()*!]/g, c => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)

/**
 * `Content-Disposition` (RFC 6266) for a file name from a client: a plain
 * ASCII form every client reads, and the whole name in UTF-8 (`filename*`)
 * for those that read it; no quote, backslash or line break reaches the header.
 */
export function disposition (kind: 'inline' | 'attachment', filename: string): string {
  const plain = filename.replace(/[^\w.-]/g, '_').slice(0, 200) || 'download'
  return `${kind}; filename="${plain}"; filename*=UTF-8''${escapeHeaderValue(filename)}`
}
