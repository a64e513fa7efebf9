package solrdev;

import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.ReaderUtil;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanClause.Occur;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.MatchAllDocsQuery;
import org.apache.lucene.search.MatchNoDocsQuery;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.ScoreMode;
import org.apache.lucene.search.SimpleCollector;
import org.apache.lucene.search.Sort;
import org.apache.lucene.search.SortField;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.search.TopFieldCollector;
import org.apache.lucene.search.TopScoreDocCollector;
import org.apache.lucene.util.FixedBitSet;

/** /select (q, fq, sort, start, rows, fl, facets, highlighting) and /get (real-time get). */
final class SearchHandler {
  private SearchHandler() {}

  /** Parameters of Solr features this server lacks: present (or true) means 400, never a silent answer. */
  private static final List<String> UNSUPPORTED_IF_PRESENT = List.of(
      "json.facet", "cursorMark", "debug", "explainOther", "rq", "shards", "minExactCount", "json",
      "facet.query", "facet.range", "facet.pivot", "facet.interval", "facet.heatmap",
      "facet.contains", "facet.excludeTerms", "hl.alternateField", "hl.q.op");
  private static final List<String> UNSUPPORTED_IF_TRUE = List.of(
      "group", "stats", "spellcheck", "mlt", "debugQuery", "expand", "terms", "tv");

  static Map<String, Object> select(Core core, Params p) throws IOException {
    checkSupported(p);
    Schema schema = core.schema;
    Instant now = now(p);
    QueryParser parser = new QueryParser(schema, p.get("df"), p.get("q.op"), p.getBool("sow", false), now);
    String qs = p.get("q");
    Query main = qs == null || qs.isEmpty() ? new MatchNoDocsQuery() : makeQueryable(parser.parse(qs));
    List<Query> filters = new ArrayList<>();
    for (String fq : p.getAll("fq")) {
      if (!fq.isBlank()) filters.add(makeQueryable(parser.parse(fq)));
    }
    Query query = main;
    if (!filters.isEmpty()) {
      BooleanQuery.Builder b = new BooleanQuery.Builder().add(main, Occur.MUST);
      for (Query f : filters) b.add(f, Occur.FILTER);
      query = b.build();
    }
    int start = p.getInt("start", 0), rows = p.getInt("rows", 10);
    if (start < 0) throw SolrError.bad("'start' parameter cannot be negative");
    if (rows < 0) throw SolrError.bad("'rows' parameter cannot be negative");
    ReturnFields rf = ReturnFields.parse(p.getAll("fl"));
    Sort sort = parseSort(p.get("sort"), schema);

    IndexSearcher searcher = core.acquire();
    try {
      int want = (int) Math.max(1, Math.min((long) start + rows, Math.max(1, searcher.getIndexReader().maxDoc())));
      TopDocs top;
      float maxScore = 0f;
      if (sort == null) {
        TopScoreDocCollector c = TopScoreDocCollector.create(want, Integer.MAX_VALUE);
        searcher.search(query, c);
        top = c.topDocs();
        if (top.scoreDocs.length > 0) maxScore = top.scoreDocs[0].score;
      } else {
        TopFieldCollector c = TopFieldCollector.create(sort, want, Integer.MAX_VALUE);
        searcher.search(query, c);
        top = c.topDocs();
        if (rf.score) {
          TopFieldCollector.populateScores(top.scoreDocs, searcher, query);
          TopScoreDocCollector best = TopScoreDocCollector.create(1, Integer.MAX_VALUE);
          searcher.search(query, best);
          TopDocs b = best.topDocs();
          if (b.scoreDocs.length > 0) maxScore = b.scoreDocs[0].score;
        }
      }
      List<Object> docs = new ArrayList<>();
      int end = (int) Math.min(top.scoreDocs.length, (long) start + rows);
      List<Integer> ids = new ArrayList<>();
      List<String> keys = new ArrayList<>();
      List<LeafReaderContext> leaves = searcher.getIndexReader().leaves();
      for (int i = start; i < end; i++) {
        ScoreDoc sd = top.scoreDocs[i];
        LeafReaderContext leaf = leaves.get(ReaderUtil.subIndex(sd.doc, leaves));
        Map<String, List<Object>> stored = Fields.read(schema, leaf.reader(), sd.doc - leaf.docBase);
        docs.add(render(schema, stored, rf, sd.score));
        ids.add(sd.doc);
        List<Object> key = stored.get(schema.uniqueKey);
        keys.add(key == null ? null : key.get(0).toString());
      }
      Map<String, Object> response = new LinkedHashMap<>();
      response.put("numFound", top.totalHits.value);
      response.put("start", start);
      if (rf.score) response.put("maxScore", maxScore);
      response.put("numFoundExact", true);
      response.put("docs", docs);
      Map<String, Object> out = new LinkedHashMap<>();
      out.put("response", response);
      if (p.getBool("facet", false)) {
        out.put("facet_counts", Facets.facetCounts(schema, searcher, matches(searcher, query), p));
      }
      if (p.getBool("hl", false)) {
        String hlq = p.get("hl.q");
        Query hlQuery = hlq == null ? main : parser.parse(hlq);
        int[] docIds = ids.stream().mapToInt(Integer::intValue).toArray();
        out.put("highlighting", Highlights.highlight(schema, searcher, hlQuery, docIds, keys.toArray(new String[0]), p));
      }
      return out;
    } finally {
      core.release(searcher);
    }
  }

  /** /get?id=… answers {"doc":…}; /get?ids=a,b (or several id) answers a result list. */
  static Map<String, Object> get(Core core, Params p) throws IOException {
    if (p.has("fq")) throw SolrError.unsupported("fq on real-time get");
    List<String> ids = new ArrayList<>(p.getAll("id"));
    for (String list : p.getAll("ids")) {
      for (String id : list.split(",")) if (!id.isEmpty()) ids.add(id);
    }
    ReturnFields rf = ReturnFields.parse(p.getAll("fl"));
    List<Map<String, List<Object>>> found = new ArrayList<>();
    synchronized (core.lock()) {
      for (String id : ids) found.add(core.realTimeGet(id));
    }
    Map<String, Object> out = new LinkedHashMap<>();
    if (p.getAll("id").size() == 1 && !p.has("ids")) {
      out.put("doc", found.get(0) == null ? null : render(core.schema, found.get(0), rf, null));
      return out;
    }
    List<Object> docs = new ArrayList<>();
    for (Map<String, List<Object>> d : found) if (d != null) docs.add(render(core.schema, d, rf, null));
    Map<String, Object> response = new LinkedHashMap<>();
    response.put("numFound", docs.size());
    response.put("start", 0);
    response.put("numFoundExact", true);
    response.put("docs", docs);
    out.put("response", response);
    return out;
  }

  private static void checkSupported(Params p) {
    String defType = p.get("defType");
    if (defType != null && !defType.equals("lucene")) {
      throw SolrError.unsupported("defType=" + defType + " (only the standard lucene query parser)");
    }
    for (String k : UNSUPPORTED_IF_PRESENT) if (p.has(k)) throw SolrError.unsupported("the parameter " + k);
    for (String k : UNSUPPORTED_IF_TRUE) if (p.getBool(k, false)) throw SolrError.unsupported(k + "=true");
    String tz = p.get("TZ");
    if (tz != null && !tz.equals("UTC")) throw SolrError.unsupported("TZ other than UTC");
    String nl = p.get("json.nl");
    if (nl != null && !nl.equals("flat")) throw SolrError.unsupported("json.nl=" + nl);
  }

  private static Instant now(Params p) {
    String v = p.get("NOW");
    if (v == null) return Instant.now();
    try {
      return Instant.ofEpochMilli(Long.parseLong(v));
    } catch (NumberFormatException e) {
      throw SolrError.bad("Invalid NOW param: " + v);
    }
  }

  /** Solr's QueryUtils.makeQueryable: a purely negative query also needs *:* to match anything. */
  static Query makeQueryable(Query q) {
    if (!(q instanceof BooleanQuery)) return q;
    BooleanQuery bq = (BooleanQuery) q;
    if (bq.clauses().isEmpty()) return q;
    for (BooleanClause c : bq.clauses()) if (!c.isProhibited()) return q;
    BooleanQuery.Builder b = new BooleanQuery.Builder();
    for (BooleanClause c : bq.clauses()) b.add(c);
    b.add(new MatchAllDocsQuery(), Occur.MUST);
    return b.build();
  }

  private static FixedBitSet matches(IndexSearcher searcher, Query query) throws IOException {
    FixedBitSet bits = new FixedBitSet(Math.max(1, searcher.getIndexReader().maxDoc()));
    searcher.search(query, new SimpleCollector() {
      private int base;

      @Override
      protected void doSetNextReader(LeafReaderContext context) {
        base = context.docBase;
      }

      @Override
      public void collect(int doc) {
        bits.set(base + doc);
      }

      @Override
      public ScoreMode scoreMode() {
        return ScoreMode.COMPLETE_NO_SCORES;
      }
    });
    return bits;
  }

  /** Solr's sort syntax: "field asc|desc[, …]" with score and _docid_; functions are not supported. */
  static Sort parseSort(String spec, Schema schema) {
    if (spec == null || spec.isBlank()) return null;
    if (spec.contains("(")) throw SolrError.unsupported("sorting by functions (" + spec + ")");
    List<SortField> fields = new ArrayList<>();
    for (String part : spec.split(",")) {
      part = part.trim();
      if (part.isEmpty()) continue;
      String[] bits = part.split("\\s+");
      String dir = bits.length == 2 ? bits[1].toLowerCase(java.util.Locale.ROOT) : "";
      if (bits.length != 2 || !(dir.equals("asc") || dir.equals("desc"))) {
        int pos = bits.length >= 2 ? spec.indexOf(bits[1], spec.indexOf(part)) : spec.indexOf(part) + part.length();
        throw SolrError.bad("Can't determine a Sort Order (asc or desc) in sort spec '" + spec + "', pos=" + pos);
      }
      boolean desc = dir.equals("desc");
      String name = bits[0];
      if (name.equals("score")) fields.add(new SortField(null, SortField.Type.SCORE, !desc));
      else if (name.equals("_docid_")) fields.add(new SortField(null, SortField.Type.DOC, desc));
      else {
        Schema.Field f = schema.field(name);
        if (f == null) throw SolrError.bad("sort param field can't be found: " + name);
        fields.add(Fields.sortField(f.usable(), desc));
      }
    }
    return fields.isEmpty() ? null : new Sort(fields.toArray(new SortField[0]));
  }

  /** A result document as Solr writes it: single values bare, multiValued fields as arrays. */
  static Map<String, Object> render(Schema schema, Map<String, List<Object>> doc, ReturnFields rf, Float score) {
    Map<String, Object> out = new LinkedHashMap<>();
    for (Map.Entry<String, List<Object>> e : doc.entrySet()) {
      String name = e.getKey();
      Schema.Field f = schema.field(name);
      if (f == null || e.getValue().isEmpty()) continue;
      Object v = f.multiValued() ? e.getValue() : e.getValue().get(0);
      for (Map.Entry<String, String> a : rf.aliases.entrySet()) if (a.getValue().equals(name)) out.put(a.getKey(), v);
      if (rf.wants(name)) out.put(name, v);
    }
    if (rf.score && score != null) out.put("score", score);
    return out;
  }

  /** Solr's fl: names, globs, alias:field, * and score; functions and [transformers] are not supported. */
  static final class ReturnFields {
    boolean all;
    boolean score;
    final Set<String> names = new HashSet<>();
    final List<String> globs = new ArrayList<>();
    final Map<String, String> aliases = new LinkedHashMap<>();

    static ReturnFields parse(List<String> fls) {
      ReturnFields rf = new ReturnFields();
      boolean any = false;
      for (String fl : fls) {
        if (fl.contains("(") || fl.contains("[")) throw SolrError.unsupported("functions and [transformers] in fl (fl=" + fl + ")");
        for (String t : fl.trim().split("[,\\s]+")) {
          if (t.isEmpty()) continue;
          any = true;
          if (t.equals("*")) rf.all = true;
          else if (t.equals("score")) rf.score = true;
          else if (t.indexOf(':') > 0) rf.aliases.put(t.substring(0, t.indexOf(':')), t.substring(t.indexOf(':') + 1));
          else if (t.contains("*") || t.contains("?")) rf.globs.add(t.replace("?", ".").replace("*", ".*"));
          else rf.names.add(t);
        }
      }
      if (!any) rf.all = true;
      return rf;
    }

    boolean wants(String field) {
      if (all || names.contains(field)) return true;
      for (String g : globs) if (field.matches(g)) return true;
      return false;
    }
  }
}
