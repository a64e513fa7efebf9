package solrdev;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.lucene.index.DocValues;
import org.apache.lucene.index.LeafReader;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.PostingsEnum;
import org.apache.lucene.index.SortedNumericDocValues;
import org.apache.lucene.index.SortedSetDocValues;
import org.apache.lucene.index.Terms;
import org.apache.lucene.index.TermsEnum;
import org.apache.lucene.search.DocIdSetIterator;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.util.Bits;
import org.apache.lucene.util.BytesRef;
import org.apache.lucene.util.FixedBitSet;
import solrdev.Schema.Kind;

/**
 * Solr's field faceting (facet=true&amp;facet.field=…) over the documents a query matched, with
 * facet.limit, facet.offset, facet.mincount (default 0: every term of the field is listed),
 * facet.sort (count, ties in index order; or index), facet.prefix and facet.missing, and their
 * f.&lt;field&gt;. overrides. Text fields count their indexed terms; other fields their docValues.
 */
final class Facets {
  private Facets() {}

  /** A facet value in index order, its label, and how many matching documents have it. */
  private static final class Bucket {
    final Comparable<Object> key;
    final String label;
    long count;

    Bucket(Comparable<Object> key, String label) {
      this.key = key;
      this.label = label;
    }
  }

  static Map<String, Object> facetCounts(Schema schema, IndexSearcher searcher, FixedBitSet matches, Params p) throws IOException {
    Map<String, Object> fields = new LinkedHashMap<>();
    for (String name : p.getAll("facet.field")) {
      if (name.startsWith("{!")) throw SolrError.unsupported("local params in facet.field (" + name + ")");
      fields.put(name, field(schema, searcher, matches, p, name));
    }
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("facet_queries", new LinkedHashMap<>());
    out.put("facet_fields", fields);
    out.put("facet_ranges", new LinkedHashMap<>());
    out.put("facet_intervals", new LinkedHashMap<>());
    out.put("facet_heatmaps", new LinkedHashMap<>());
    return out;
  }

  private static List<Object> field(Schema schema, IndexSearcher searcher, FixedBitSet matches, Params p, String name) throws IOException {
    Schema.Field f = schema.fieldOrThrow(name);
    if (f.kind().isPoint() && !f.docValues()) throw SolrError.bad("Can't facet on a PointField without docValues");
    int limit = p.fieldInt(name, "facet.limit", 100);
    int offset = p.fieldInt(name, "facet.offset", 0);
    int mincount = p.fieldInt(name, "facet.mincount", 0);
    String sort = p.fieldParam(name, "facet.sort", limit > 0 ? "count" : "index");
    boolean byCount;
    if (sort.equals("count") || sort.equals("true")) byCount = true;
    else if (sort.equals("index") || sort.equals("false")) byCount = false;
    else throw SolrError.unsupported("facet.sort=" + sort);
    String prefix = p.fieldParam(name, "facet.prefix", null);
    if (prefix != null && f.kind().isPoint()) throw SolrError.unsupported("facet.prefix on numeric or date field " + name);
    boolean missing = p.fieldBool(name, "facet.missing", false);

    Map<Object, Bucket> buckets = new HashMap<>();
    long withValue = f.kind() == Kind.TEXT
        ? countTerms(f, searcher, matches, buckets, prefix)
        : countDocValues(f, searcher, matches, buckets, prefix, mincount <= 0);

    List<Bucket> list = new ArrayList<>();
    for (Bucket b : buckets.values()) if (b.count >= mincount) list.add(b);
    Comparator<Bucket> index = (a, b) -> a.key.compareTo(b.key);
    list.sort(byCount ? Comparator.comparingLong((Bucket b) -> -b.count).thenComparing(index) : index);
    List<Object> flat = new ArrayList<>();
    int end = limit < 0 ? list.size() : (int) Math.min(list.size(), (long) offset + limit);
    for (int i = Math.max(0, offset); i < end; i++) {
      flat.add(list.get(i).label);
      flat.add((int) list.get(i).count);
    }
    if (missing) {
      flat.add(null);
      flat.add((int) (matches.cardinality() - withValue));
    }
    return flat;
  }

  /** Text fields: each indexed term counts the matching documents in its postings. */
  private static long countTerms(Schema.Field f, IndexSearcher searcher, FixedBitSet matches,
      Map<Object, Bucket> buckets, String prefix) throws IOException {
    FixedBitSet seen = new FixedBitSet(Math.max(1, matches.length()));
    BytesRef pre = prefix == null ? null : new BytesRef(prefix);
    for (LeafReaderContext ctx : searcher.getIndexReader().leaves()) {
      Terms terms = ctx.reader().terms(f.name);
      if (terms == null) continue;
      TermsEnum te = terms.iterator();
      if (pre != null && te.seekCeil(pre) == TermsEnum.SeekStatus.END) continue;
      PostingsEnum pe = null;
      for (BytesRef t = pre != null ? te.term() : te.next(); t != null; t = te.next()) {
        if (pre != null && !startsWith(t, pre)) break;
        BytesRef key = BytesRef.deepCopyOf(t);
        Bucket b = buckets.computeIfAbsent(key, k -> new Bucket(comparable(k), key.utf8ToString()));
        pe = te.postings(pe, PostingsEnum.NONE);
        for (int d = pe.nextDoc(); d != DocIdSetIterator.NO_MORE_DOCS; d = pe.nextDoc()) {
          int global = ctx.docBase + d;
          if (matches.get(global)) {
            b.count++;
            seen.set(global);
          }
        }
      }
    }
    return seen.cardinality();
  }

  /** Facet keys are BytesRef (byte order is Solr's index order) or boxed numbers. */
  @SuppressWarnings("unchecked")
  private static Comparable<Object> comparable(Object key) {
    return (Comparable<Object>) key;
  }

  private static boolean startsWith(BytesRef t, BytesRef prefix) {
    if (t.length < prefix.length) return false;
    for (int i = 0; i < prefix.length; i++) {
      if (t.bytes[t.offset + i] != prefix.bytes[prefix.offset + i]) return false;
    }
    return true;
  }

  /**
   * Other fields: docValues per matching document (each value once per document). With
   * mincount 0 the values of all live documents are listed too, with their zero counts.
   */
  private static long countDocValues(Schema.Field f, IndexSearcher searcher, FixedBitSet matches,
      Map<Object, Bucket> buckets, String prefix, boolean zeros) throws IOException {
    long withValue = 0;
    BytesRef pre = prefix == null ? null : new BytesRef(prefix);
    boolean strings = f.kind() == Kind.STRING || f.kind() == Kind.BOOL;
    for (LeafReaderContext ctx : searcher.getIndexReader().leaves()) {
      LeafReader r = ctx.reader();
      Bits live = r.getLiveDocs();
      if (strings) {
        SortedSetDocValues dv = f.multiValued() ? DocValues.getSortedSet(r, f.name)
            : DocValues.singleton(DocValues.getSorted(r, f.name));
        long[] counts = new long[(int) dv.getValueCount()];
        boolean[] present = new boolean[counts.length];
        for (int d = 0; d < r.maxDoc(); d++) {
          boolean hit = matches.get(ctx.docBase + d);
          if (!hit && (!zeros || (live != null && !live.get(d)))) continue;
          if (!dv.advanceExact(d)) continue;
          if (hit) withValue++;
          for (long o = dv.nextOrd(); o != SortedSetDocValues.NO_MORE_ORDS; o = dv.nextOrd()) {
            present[(int) o] = true;
            if (hit) counts[(int) o]++;
          }
        }
        for (int o = 0; o < counts.length; o++) {
          if (!present[o]) continue;
          BytesRef term = BytesRef.deepCopyOf(dv.lookupOrd(o));
          if (pre != null && !startsWith(term, pre)) continue;
          String label = f.kind() == Kind.BOOL ? String.valueOf("T".equals(term.utf8ToString())) : term.utf8ToString();
          buckets.computeIfAbsent(term, k -> new Bucket(comparable(k), label)).count += counts[o];
        }
      } else {
        SortedNumericDocValues dv = f.multiValued() ? DocValues.getSortedNumeric(r, f.name)
            : DocValues.singleton(DocValues.getNumeric(r, f.name));
        for (int d = 0; d < r.maxDoc(); d++) {
          boolean hit = matches.get(ctx.docBase + d);
          if (!hit && (!zeros || (live != null && !live.get(d)))) continue;
          if (!dv.advanceExact(d)) continue;
          if (hit) withValue++;
          Set<Long> once = new HashSet<>();
          for (int i = 0; i < dv.docValueCount(); i++) {
            long raw = dv.nextValue();
            if (!once.add(raw)) continue;
            Object v = Fields.fromNumeric(f, raw);
            Bucket b = buckets.computeIfAbsent(v, k -> new Bucket(comparable(k), k.toString()));
            if (hit) b.count++;
          }
        }
      }
    }
    return withValue;
  }
}
