package solrdev;

import java.io.IOException;
import java.text.BreakIterator;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import org.apache.lucene.index.FieldInfo;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.uhighlight.DefaultPassageFormatter;
import org.apache.lucene.search.uhighlight.LengthGoalBreakIterator;
import org.apache.lucene.search.uhighlight.PassageFormatter;
import org.apache.lucene.search.uhighlight.PassageScorer;
import org.apache.lucene.search.uhighlight.UnifiedHighlighter;
import org.apache.lucene.search.uhighlight.WholeBreakIterator;
import solrdev.Schema.Kind;

/**
 * hl=true, configured as Solr 9's default highlighter (hl.method=unified,
 * UnifiedSolrHighlighter): the same Lucene UnifiedHighlighter with Solr's defaults for tags,
 * fragment size (70, as a minimum, aligned at 0.33), sentence breaks, passage scoring and
 * flags. The answer maps each result's uniqueKey to {field: [snippets]}; fields without a
 * highlight are left out, as in Solr 9.
 */
final class Highlights {
  private Highlights() {}

  private static final String SNIPPET_SEPARATOR = "\u0000";

  static Map<String, Object> highlight(Schema schema, IndexSearcher searcher, Query query, int[] docIds,
      String[] keys, Params p) throws IOException {
    String method = p.get("hl.method", "unified");
    if (!method.equals("unified")) throw SolrError.unsupported("hl.method=" + method + " (only unified, Solr 9's default)");
    String[] fields = fields(schema, searcher, p);
    int[] maxPassages = new int[fields.length];
    for (int i = 0; i < fields.length; i++) maxPassages[i] = p.fieldInt(fields[i], "hl.snippets", 1);
    Map<String, String[]> snippets = fields.length == 0 || docIds.length == 0
        ? Map.of() : highlighter(schema, searcher, p).highlightFields(fields, query, docIds, maxPassages);
    Map<String, Object> out = new LinkedHashMap<>();
    for (int i = 0; i < docIds.length; i++) {
      Map<String, Object> summary = new LinkedHashMap<>();
      for (String f : fields) {
        String s = snippets.isEmpty() ? null : snippets.get(f)[i];
        if (s != null) summary.put(f, Arrays.asList(s.split(SNIPPET_SEPARATOR)));
      }
      out.put(keys[i], summary);
    }
    return out;
  }

  /** hl.fl (comma or space separated, globs allowed), defaulting to df. */
  private static String[] fields(Schema schema, IndexSearcher searcher, Params p) {
    String fl = p.get("hl.fl");
    if (fl == null || fl.isBlank()) fl = p.get("df", "");
    Set<String> out = new LinkedHashSet<>();
    for (String name : fl.trim().split("[,\\s]+")) {
      if (name.isEmpty()) continue;
      if (name.contains("*") || name.contains("?")) {
        String regex = name.replace("?", ".").replace("*", ".*");
        for (LeafReaderContext ctx : searcher.getIndexReader().leaves()) {
          for (FieldInfo fi : ctx.reader().getFieldInfos()) {
            Schema.Field f = schema.field(fi.name);
            if (f != null && f.stored() && (f.kind() == Kind.TEXT || f.kind() == Kind.STRING)
                && fi.name.matches(regex)) {
              out.add(fi.name);
            }
          }
        }
      } else {
        out.add(name);
      }
    }
    return out.toArray(new String[0]);
  }

  private static UnifiedHighlighter highlighter(Schema schema, IndexSearcher searcher, Params p) {
    UnifiedHighlighter uh = new UnifiedHighlighter(searcher, schema.indexAnalyzer) {
      @Override
      protected OffsetSource getOffsetSource(String field) {
        String source = p.fieldParam(field, "hl.offsetSource", null);
        return source != null ? OffsetSource.valueOf(source.toUpperCase(Locale.ROOT)) : super.getOffsetSource(field);
      }

      @Override
      protected int getMaxNoHighlightPassages(String field) {
        return p.fieldBool(field, "hl.defaultSummary", false) ? -1 : 0;
      }

      @Override
      protected PassageFormatter getFormatter(String field) {
        String pre = p.fieldParam(field, "hl.tag.pre", p.fieldParam(field, "hl.simple.pre", "<em>"));
        String post = p.fieldParam(field, "hl.tag.post", p.fieldParam(field, "hl.simple.post", "</em>"));
        String ellipsis = p.fieldParam(field, "hl.tag.ellipsis", SNIPPET_SEPARATOR);
        String encoder = p.fieldParam(field, "hl.encoder", "simple");
        return new DefaultPassageFormatter(pre, post, ellipsis, "html".equals(encoder));
      }

      @Override
      protected PassageScorer getScorer(String field) {
        return new PassageScorer(p.fieldFloat(field, "hl.score.k1", 1.2f),
            p.fieldFloat(field, "hl.score.b", 0.75f), p.fieldFloat(field, "hl.score.pivot", 87f));
      }

      @Override
      protected BreakIterator getBreakIterator(String field) {
        int fragsize = p.fieldInt(field, "hl.fragsize", 70);
        String type = p.fieldParam(field, "hl.bs.type", null);
        if (fragsize == 0 || "WHOLE".equals(type)) return new WholeBreakIterator();
        Locale locale = locale(p.fieldParam(field, "hl.bs.language", null), p.fieldParam(field, "hl.bs.country", null));
        BreakIterator base;
        if (type == null || type.equals("SENTENCE")) base = BreakIterator.getSentenceInstance(locale);
        else if (type.equals("LINE")) base = BreakIterator.getLineInstance(locale);
        else if (type.equals("WORD")) base = BreakIterator.getWordInstance(locale);
        else if (type.equals("CHARACTER")) base = BreakIterator.getCharacterInstance(locale);
        else throw SolrError.bad("Unknown hl.bs.type: " + type);
        if (fragsize <= 1) return base;
        float align = p.fieldFloat(field, "hl.fragAlignRatio", 0.33f);
        return p.fieldBool(field, "hl.fragsizeIsMinimum", true)
            ? LengthGoalBreakIterator.createMinLength(base, fragsize, align)
            : LengthGoalBreakIterator.createClosestToLength(base, fragsize, align);
      }

      @Override
      protected Set<HighlightFlag> getFlags(String field) {
        Set<HighlightFlag> flags = EnumSet.noneOf(HighlightFlag.class);
        if (p.fieldBool(field, "hl.highlightMultiTerm", true)) flags.add(HighlightFlag.MULTI_TERM_QUERY);
        if (p.fieldBool(field, "hl.usePhraseHighlighter", true)) flags.add(HighlightFlag.PHRASES);
        flags.add(HighlightFlag.PASSAGE_RELEVANCY_OVER_SPEED);
        if (p.fieldBool(field, "hl.weightMatches", true) && flags.contains(HighlightFlag.PHRASES)
            && flags.contains(HighlightFlag.MULTI_TERM_QUERY)) {
          flags.add(HighlightFlag.WEIGHT_MATCHES);
        }
        return flags;
      }

      @Override
      protected Predicate<String> getFieldMatcher(String field) {
        return p.fieldBool(field, "hl.requireFieldMatch", false) ? field::equals : s -> true;
      }
    };
    uh.setMaxLength(p.getInt("hl.maxAnalyzedChars", UnifiedHighlighter.DEFAULT_MAX_LENGTH));
    uh.setCacheFieldValCharsThreshold(p.getInt("hl.cacheFieldValCharsThreshold", UnifiedHighlighter.DEFAULT_CACHE_CHARS_THRESHOLD));
    return uh;
  }

  private static Locale locale(String language, String country) {
    if (language == null) return Locale.ROOT;
    return country == null ? new Locale(language) : new Locale(language, country);
  }
}
