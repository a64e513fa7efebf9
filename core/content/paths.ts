/** Content paths: `/` is the site root, `/talks/a` an object two levels below it. */

/** `/talks/a` → `['/', '/talks', '/talks/a']`: the object and every ancestor. */
export function pathParents (path: string): string[] {
  const parts = path.split('/').filter(Boolean)
  return ['/', ...parts.map((_, i) => '/' + parts.slice(0, i + 1).join('/'))]
}

/** Depth below the site root: `/talks` is 1, `/talks/a` is 2. */
export function pathDepth (path: string): number {
  return path.split('/').filter(Boolean).length
}
