/** Letters that Unicode does not decompose but Solr's ASCIIFoldingFilter folds all the same. */
const UNDECOMPOSABLE: Record<string, string> = { ß: 'ss', æ: 'ae', œ: 'oe', ø: 'o', ł: 'l', đ: 'd', ð: 'd', þ: 'th', ı: 'i' }

/** Lower case without accents: how both the catalogue and Solr compare words. */
export function foldText (text: string): string {
  return text.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase().replace(/[ßæœøłđðþı]/g, c => UNDECOMPOSABLE[c])
}

/**
 * The words of a text as the full-text index stores them: folded, letters and
 * digits only, so that `C++`, `e-mail` or `foo:bar` split the same way in the
 * index and in a query (PostgreSQL's parser would keep some of them whole).
 */
export function searchableWords (text: string): string {
  return (foldText(text).match(/[\p{L}\p{N}]+/gu) ?? []).join(' ')
}
