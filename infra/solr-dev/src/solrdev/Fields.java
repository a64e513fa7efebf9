package solrdev;

import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.DoublePoint;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.FieldType;
import org.apache.lucene.document.FloatPoint;
import org.apache.lucene.document.IntPoint;
import org.apache.lucene.document.LongPoint;
import org.apache.lucene.document.NumericDocValuesField;
import org.apache.lucene.document.SortedDocValuesField;
import org.apache.lucene.document.SortedNumericDocValuesField;
import org.apache.lucene.document.SortedSetDocValuesField;
import org.apache.lucene.document.StoredField;
import org.apache.lucene.index.DocValues;
import org.apache.lucene.index.FieldInfo;
import org.apache.lucene.index.IndexOptions;
import org.apache.lucene.index.IndexableField;
import org.apache.lucene.index.LeafReader;
import org.apache.lucene.index.NumericDocValues;
import org.apache.lucene.index.SortedDocValues;
import org.apache.lucene.index.SortedNumericDocValues;
import org.apache.lucene.index.SortedSetDocValues;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.DocValuesFieldExistsQuery;
import org.apache.lucene.search.MatchNoDocsQuery;
import org.apache.lucene.search.NormsFieldExistsQuery;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.SortField;
import org.apache.lucene.search.SortedNumericSelector;
import org.apache.lucene.search.SortedNumericSortField;
import org.apache.lucene.search.SortedSetSelector;
import org.apache.lucene.search.SortedSetSortField;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.TermRangeQuery;
import org.apache.lucene.util.BytesRef;
import org.apache.lucene.util.NumericUtils;
import solrdev.Schema.Kind;

/**
 * How a schema field's values live in Lucene: conversion of client values to native ones (with
 * Solr's error messages), the Lucene fields written for a value, reading values back from stored
 * fields and docValues, and the field-level queries and sorts.
 *
 * <p>Every indexed non-text field also gets docValues internally, whatever the schema says: Solr
 * sorts and facets such fields by uninverting the index, which Lucene 8 alone cannot do. What a
 * client can see (fl, errors for sorting or faceting) still follows the schema's flags.
 */
final class Fields {
  private Fields() {}

  /** A built Lucene document and the values real-time get returns for it. */
  static final class Built {
    final Document doc;
    final String id;
    final Map<String, List<Object>> retrievable;

    Built(Document doc, String id, Map<String, List<Object>> retrievable) {
      this.doc = doc;
      this.id = id;
      this.retrievable = retrievable;
    }
  }

  // ----------------------------------------------------------- values in

  /** Solr's conversion of a client value; NumberFormatException etc. carry Solr's message. */
  static Object toNative(Schema.Field f, Object v, Instant now) {
    switch (f.kind()) {
      case STRING:
      case TEXT:
        return v.toString();
      case BOOL:
        if (v instanceof Boolean) return v;
        String s = v.toString();
        char c = s.isEmpty() ? 0 : s.charAt(0);
        return c == '1' || c == 't' || c == 'T';
      case INT:
        return v instanceof Number ? ((Number) v).intValue() : Integer.parseInt(v.toString());
      case LONG:
        return v instanceof Number ? ((Number) v).longValue() : Long.parseLong(v.toString());
      case FLOAT:
        return v instanceof Number ? ((Number) v).floatValue() : Float.parseFloat(v.toString());
      case DOUBLE:
        return v instanceof Number ? ((Number) v).doubleValue() : Double.parseDouble(v.toString());
      case DATE:
        return v instanceof Instant ? v : DateMath.parse(v.toString(), now);
      default:
        throw new IllegalStateException();
    }
  }

  private static final Map<Integer, FieldType> TYPES = new ConcurrentHashMap<>();

  /** Postings options from the Solr properties (omitNorms, omitTermFreqAndPositions, …). */
  private static FieldType indexedType(Schema.Field f) {
    return TYPES.computeIfAbsent(f.props, p -> {
      FieldType t = new FieldType();
      boolean text = (p & Schema.TOKENIZED) != 0;
      t.setTokenized(text);
      t.setOmitNorms((p & Schema.OMIT_NORMS) != 0);
      if ((p & Schema.OMIT_TF_POSITIONS) != 0) t.setIndexOptions(IndexOptions.DOCS);
      else if ((p & Schema.OMIT_POSITIONS) != 0) t.setIndexOptions(IndexOptions.DOCS_AND_FREQS);
      else if ((p & Schema.STORE_OFFSETS) != 0) t.setIndexOptions(IndexOptions.DOCS_AND_FREQS_AND_POSITIONS_AND_OFFSETS);
      else t.setIndexOptions(IndexOptions.DOCS_AND_FREQS_AND_POSITIONS);
      t.setStoreTermVectors((p & Schema.STORE_TERMVECTORS) != 0);
      t.setStoreTermVectorPositions((p & Schema.STORE_TERMPOSITIONS) != 0);
      t.setStoreTermVectorOffsets((p & Schema.STORE_TERMOFFSETS) != 0);
      t.freeze();
      return t;
    });
  }

  /** Whether this field carries internal docValues (see the class comment). */
  static boolean hasInternalDocValues(Schema.Field f) {
    return f.kind() != Kind.TEXT && (f.indexed() || f.docValues());
  }

  static void addToDocument(Document doc, Schema.Field f, Object v) {
    String name = f.name;
    Kind k = f.kind();
    boolean multi = f.multiValued();
    if (k == Kind.STRING || k == Kind.TEXT || k == Kind.BOOL) {
      String s = k == Kind.BOOL ? ((Boolean) v ? "T" : "F") : (String) v;
      if (f.indexed()) doc.add(new Field(name, s, indexedType(f)));
      if (f.stored()) doc.add(new StoredField(name, s));
      if (hasInternalDocValues(f)) {
        BytesRef b = new BytesRef(s);
        doc.add(multi ? new SortedSetDocValuesField(name, b) : new SortedDocValuesField(name, b));
      }
      return;
    }
    long dv;
    switch (k) {
      case INT: {
        int i = (Integer) v;
        if (f.indexed()) doc.add(new IntPoint(name, i));
        if (f.stored()) doc.add(new StoredField(name, i));
        dv = i;
        break;
      }
      case LONG: {
        long l = (Long) v;
        if (f.indexed()) doc.add(new LongPoint(name, l));
        if (f.stored()) doc.add(new StoredField(name, l));
        dv = l;
        break;
      }
      case FLOAT: {
        float x = (Float) v;
        if (f.indexed()) doc.add(new FloatPoint(name, x));
        if (f.stored()) doc.add(new StoredField(name, x));
        dv = multi ? NumericUtils.floatToSortableInt(x) : Float.floatToRawIntBits(x);
        break;
      }
      case DOUBLE: {
        double x = (Double) v;
        if (f.indexed()) doc.add(new DoublePoint(name, x));
        if (f.stored()) doc.add(new StoredField(name, x));
        dv = multi ? NumericUtils.doubleToSortableLong(x) : Double.doubleToRawLongBits(x);
        break;
      }
      case DATE: {
        long ms = ((Instant) v).toEpochMilli();
        if (f.indexed()) doc.add(new LongPoint(name, ms));
        if (f.stored()) doc.add(new StoredField(name, ms));
        dv = ms;
        break;
      }
      default:
        throw new IllegalStateException();
    }
    if (hasInternalDocValues(f)) {
      doc.add(multi ? new SortedNumericDocValuesField(name, dv) : new NumericDocValuesField(name, dv));
    }
  }

  /**
   * Solr's DocumentBuilder.toDocument: values converted and validated field by field, copyFields
   * applied, required fields and defaults checked, with Solr's error messages.
   */
  static Built build(Schema schema, Map<String, List<Object>> in, Instant now) {
    List<Object> ids = in.get(schema.uniqueKey);
    if (ids == null || ids.isEmpty() || ids.get(0) == null) {
      throw SolrError.bad("Document is missing mandatory uniqueKey field: " + schema.uniqueKey);
    }
    String id = ids.get(0).toString();
    String label = "[doc=" + id + "] ";
    Document doc = new Document();
    Map<String, List<Object>> typed = new LinkedHashMap<>();
    for (Map.Entry<String, List<Object>> e : in.entrySet()) {
      String name = e.getKey();
      List<Object> values = new ArrayList<>();
      for (Object v : e.getValue()) if (v != null) values.add(v);
      if (values.isEmpty()) continue;
      Schema.Field f = schema.field(name);
      if (f != null && !f.multiValued() && values.size() > 1) {
        throw SolrError.bad("ERROR: " + label + "multiple values encountered for non multiValued field " + name + ": " + values);
      }
      List<Schema.CopyTarget> copies = schema.copyTargets(name);
      if (f == null && copies.isEmpty()) throw SolrError.bad("ERROR: " + label + "unknown field '" + name + "'");
      try {
        for (Object v : values) {
          if (f != null) add(doc, typed, f.usable(), toNative(f, v, now));
          for (Schema.CopyTarget c : copies) {
            Schema.Field dest = c.field.usable();
            if (!dest.multiValued() && typed.containsKey(dest.name)) {
              throw SolrError.bad("Multiple values encountered for non multiValued copy field " + dest.name + ": " + v);
            }
            Object cv = v;
            if (c.maxChars > 0 && cv instanceof String && ((String) cv).length() > c.maxChars) {
              cv = ((String) cv).substring(0, c.maxChars);
            }
            add(doc, typed, dest, toNative(dest, cv, now));
          }
        }
      } catch (RuntimeException ex) {
        int code = ex instanceof SolrError ? ((SolrError) ex).code : 400;
        Object shown = values.size() == 1 ? values.get(0) : values;
        throw new SolrError(code, "ERROR: " + label + "Error adding field '" + name + "'='" + shown + "' msg=" + ex.getMessage());
      }
    }
    for (Schema.Field f : schema.fields.values()) {
      if ((f.required() || f.defaultValue != null) && !typed.containsKey(f.name)) {
        if (f.defaultValue == null) throw SolrError.bad(label + "missing required field: " + f.name);
        add(doc, typed, f.usable(), toNative(f, f.defaultValue, now));
      }
    }
    return new Built(doc, id, retrievable(schema, typed));
  }

  private static void add(Document doc, Map<String, List<Object>> typed, Schema.Field f, Object v) {
    addToDocument(doc, f, v);
    typed.computeIfAbsent(f.name, x -> new ArrayList<>()).add(v);
  }

  /**
   * The values a stored document shows: stored fields in the order given, then docValues-only
   * fields as docValues hold them (sorted; strings also de-duplicated).
   */
  static Map<String, List<Object>> retrievable(Schema schema, Map<String, List<Object>> typed) {
    Map<String, List<Object>> out = new LinkedHashMap<>();
    for (Map.Entry<String, List<Object>> e : typed.entrySet()) {
      Schema.Field f = schema.field(e.getKey());
      if (f.stored()) out.put(f.name, e.getValue());
    }
    for (Map.Entry<String, List<Object>> e : typed.entrySet()) {
      Schema.Field f = schema.field(e.getKey());
      if (!f.stored() && f.retrievable()) out.put(f.name, sortedLikeDocValues(f, e.getValue()));
    }
    return out;
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  private static List<Object> sortedLikeDocValues(Schema.Field f, List<Object> values) {
    if (values.size() < 2) return values;
    if (f.kind() == Kind.STRING) {
      TreeSet<BytesRef> set = new TreeSet<>();
      for (Object v : values) set.add(new BytesRef((String) v));
      List<Object> out = new ArrayList<>();
      for (BytesRef b : set) out.add(b.utf8ToString());
      return out;
    }
    if (f.kind() == Kind.BOOL) return new ArrayList<>(new TreeSet<>((List) values));
    List<Object> out = new ArrayList<>(values);
    Collections.sort((List) out);
    return out;
  }

  // ----------------------------------------------------------- values out

  static Object fromStored(Schema.Field f, IndexableField s) {
    switch (f.kind()) {
      case STRING:
      case TEXT:
        return s.stringValue();
      case BOOL:
        return "T".equals(s.stringValue());
      case INT:
        return s.numericValue().intValue();
      case LONG:
        return s.numericValue().longValue();
      case FLOAT:
        return s.numericValue().floatValue();
      case DOUBLE:
        return s.numericValue().doubleValue();
      case DATE:
        return Instant.ofEpochMilli(s.numericValue().longValue());
      default:
        throw new IllegalStateException();
    }
  }

  /** One document's retrievable values read from a segment: stored fields, then docValues. */
  static Map<String, List<Object>> read(Schema schema, LeafReader leaf, int doc) throws IOException {
    Map<String, List<Object>> out = new LinkedHashMap<>();
    for (IndexableField s : leaf.document(doc)) {
      Schema.Field f = schema.field(s.name());
      if (f == null || f.type.unsupported != null || !f.stored()) continue;
      out.computeIfAbsent(f.name, x -> new ArrayList<>()).add(fromStored(f, s));
    }
    for (FieldInfo fi : leaf.getFieldInfos()) {
      if (fi.getDocValuesType() == org.apache.lucene.index.DocValuesType.NONE) continue;
      Schema.Field f = schema.field(fi.name);
      if (f == null || f.type.unsupported != null || f.stored() || !f.retrievable()) continue;
      List<Object> values = readDocValues(f, leaf, doc);
      if (!values.isEmpty()) out.put(f.name, values);
    }
    return out;
  }

  static List<Object> readDocValues(Schema.Field f, LeafReader leaf, int doc) throws IOException {
    List<Object> out = new ArrayList<>();
    Kind k = f.kind();
    if (k == Kind.STRING || k == Kind.BOOL) {
      if (f.multiValued()) {
        SortedSetDocValues dv = DocValues.getSortedSet(leaf, f.name);
        if (dv.advanceExact(doc)) {
          for (long ord = dv.nextOrd(); ord != SortedSetDocValues.NO_MORE_ORDS; ord = dv.nextOrd()) {
            out.add(fromBytes(k, dv.lookupOrd(ord)));
          }
        }
      } else {
        SortedDocValues dv = DocValues.getSorted(leaf, f.name);
        if (dv.advanceExact(doc)) out.add(fromBytes(k, dv.binaryValue()));
      }
    } else if (f.multiValued()) {
      SortedNumericDocValues dv = DocValues.getSortedNumeric(leaf, f.name);
      if (dv.advanceExact(doc)) {
        for (int i = 0; i < dv.docValueCount(); i++) out.add(fromNumeric(f, dv.nextValue()));
      }
    } else {
      NumericDocValues dv = DocValues.getNumeric(leaf, f.name);
      if (dv.advanceExact(doc)) out.add(fromNumeric(f, dv.longValue()));
    }
    return out;
  }

  private static Object fromBytes(Kind k, BytesRef b) {
    String s = b.utf8ToString();
    return k == Kind.BOOL ? (Object) "T".equals(s) : s;
  }

  /** Decodes the docValues long written by addToDocument. */
  static Object fromNumeric(Schema.Field f, long v) {
    boolean multi = f.multiValued();
    switch (f.kind()) {
      case INT: return (int) v;
      case LONG: return v;
      case DATE: return Instant.ofEpochMilli(v);
      case FLOAT: return multi ? NumericUtils.sortableIntToFloat((int) v) : Float.intBitsToFloat((int) v);
      case DOUBLE: return multi ? NumericUtils.sortableLongToDouble(v) : Double.longBitsToDouble(v);
      default: throw new IllegalStateException();
    }
  }

  // ----------------------------------------------------------- queries and sorts

  /** Solr's "Invalid Number" error for query values. */
  private static SolrError invalidNumber(Schema.Field f, String v) {
    return SolrError.bad("Invalid Number: " + v + " for field " + f.name);
  }

  private static long parseLong(Schema.Field f, String v, Instant now) {
    try {
      switch (f.kind()) {
        case INT: return Integer.parseInt(v);
        case LONG: return Long.parseLong(v);
        case DATE: return DateMath.parse(v, now).toEpochMilli();
        default: throw new IllegalStateException();
      }
    } catch (NumberFormatException e) {
      throw invalidNumber(f, v);
    }
  }

  private static double parseDouble(Schema.Field f, String v) {
    try {
      return Double.parseDouble(v);
    } catch (NumberFormatException e) {
      throw invalidNumber(f, v);
    }
  }

  /** The query for one value of a non-text field (text fields are analysed by the parser). */
  static Query termQuery(Schema.Field f, String v, Instant now) {
    Kind k = f.kind();
    if (k == Kind.STRING || k == Kind.BOOL) {
      String term = k == Kind.BOOL ? ((Boolean) toNative(f, v, now) ? "T" : "F") : v;
      // Solr: a term query unless the field has docValues only (so nothing, if it has neither).
      if (f.indexed() || !f.docValues()) return new TermQuery(new Term(f.name, term));
      BytesRef b = new BytesRef(term);
      return f.multiValued() ? SortedSetDocValuesField.newSlowExactQuery(f.name, b)
          : SortedDocValuesField.newSlowExactQuery(f.name, b);
    }
    return rangeQuery(f, v, v, true, true, now);
  }

  private static void requireDocValues(Schema.Field f) {
    if (!f.docValues()) {
      throw SolrError.bad("Can't run queries on a PointField without docValues or indexed: " + f.name);
    }
  }

  /** Ranges, with Solr's exclusive-bound arithmetic for points; null bound = open (*). */
  static Query rangeQuery(Schema.Field f, String lo, String hi, boolean loInc, boolean hiInc, Instant now) {
    Kind k = f.kind();
    if (k == Kind.STRING || k == Kind.BOOL || k == Kind.TEXT) {
      String l = lo, h = hi;
      if (k == Kind.BOOL) {
        l = lo == null ? null : ((Boolean) toNative(f, lo, now) ? "T" : "F");
        h = hi == null ? null : ((Boolean) toNative(f, hi, now) ? "T" : "F");
      } else if (k == Kind.TEXT) {
        l = lo == null ? null : Analysis.multiTerm(f.type, f.name, lo);
        h = hi == null ? null : Analysis.multiTerm(f.type, f.name, hi);
      }
      if (f.indexed() || !f.docValues()) return TermRangeQuery.newStringRange(f.name, l, h, loInc, hiInc);
      BytesRef lb = l == null ? null : new BytesRef(l), hb = h == null ? null : new BytesRef(h);
      return f.multiValued() ? SortedSetDocValuesField.newSlowRangeQuery(f.name, lb, hb, loInc, hiInc)
          : SortedDocValuesField.newSlowRangeQuery(f.name, lb, hb, loInc, hiInc);
    }
    if (k == Kind.FLOAT || k == Kind.DOUBLE) {
      double l = lo == null ? Double.NEGATIVE_INFINITY : parseDouble(f, lo);
      double h = hi == null ? Double.POSITIVE_INFINITY : parseDouble(f, hi);
      if (!f.indexed()) throw SolrError.unsupported("range or value queries on float/double field " + f.name + " that is not indexed");
      if (k == Kind.FLOAT) {
        float fl = (float) l, fh = (float) h;
        if (!loInc) {
          if (fl == Float.POSITIVE_INFINITY) return new MatchNoDocsQuery();
          fl = Math.nextUp(fl);
        }
        if (!hiInc) {
          if (fh == Float.NEGATIVE_INFINITY) return new MatchNoDocsQuery();
          fh = Math.nextDown(fh);
        }
        return FloatPoint.newRangeQuery(f.name, fl, fh);
      }
      if (!loInc) {
        if (l == Double.POSITIVE_INFINITY) return new MatchNoDocsQuery();
        l = Math.nextUp(l);
      }
      if (!hiInc) {
        if (h == Double.NEGATIVE_INFINITY) return new MatchNoDocsQuery();
        h = Math.nextDown(h);
      }
      return DoublePoint.newRangeQuery(f.name, l, h);
    }
    long min = k == Kind.INT ? Integer.MIN_VALUE : Long.MIN_VALUE;
    long max = k == Kind.INT ? Integer.MAX_VALUE : Long.MAX_VALUE;
    long l = lo == null ? min : parseLong(f, lo, now);
    long h = hi == null ? max : parseLong(f, hi, now);
    if (!loInc) {
      if (l == max) return new MatchNoDocsQuery();
      l++;
    }
    if (!hiInc) {
      if (h == min) return new MatchNoDocsQuery();
      h--;
    }
    if (f.indexed()) {
      return k == Kind.INT ? IntPoint.newRangeQuery(f.name, (int) l, (int) h) : LongPoint.newRangeQuery(f.name, l, h);
    }
    requireDocValues(f);
    return f.multiValued() ? SortedNumericDocValuesField.newSlowRangeQuery(f.name, l, h)
        : NumericDocValuesField.newSlowRangeQuery(f.name, l, h);
  }

  /** field:* — Solr's FieldType.getExistenceQuery. */
  static Query existenceQuery(Schema.Field f) {
    if (hasInternalDocValues(f)) return new DocValuesFieldExistsQuery(f.name);
    if (f.kind() == Kind.TEXT && f.indexed() && !f.has(Schema.OMIT_NORMS)) return new NormsFieldExistsQuery(f.name);
    if (f.kind().isPoint()) requireDocValues(f);
    return TermRangeQuery.newStringRange(f.name, null, null, true, true);
  }

  /** Solr's getSortField with its sortability checks and sortMissingFirst/Last rules. */
  static SortField sortField(Schema.Field f, boolean reverse) {
    Kind k = f.kind();
    if (k == Kind.TEXT) throw SolrError.unsupported("sorting on TextField " + f.name);
    boolean uninvertible = f.indexed() && f.has(Schema.UNINVERTIBLE) && !(f.multiValued() && k.isPoint());
    if (!f.docValues() && !uninvertible) {
      throw SolrError.bad("can not sort on a field w/o docValues unless it is indexed=true uninvertible=true and the type supports Uninversion: " + f.name);
    }
    boolean missingLast = f.has(Schema.SORT_MISSING_LAST), missingFirst = f.has(Schema.SORT_MISSING_FIRST);
    SortField sf;
    if (k == Kind.STRING || k == Kind.BOOL) {
      sf = f.multiValued()
          ? new SortedSetSortField(f.name, reverse, reverse ? SortedSetSelector.Type.MAX : SortedSetSelector.Type.MIN)
          : new SortField(f.name, SortField.Type.STRING, reverse);
      if (missingLast) sf.setMissingValue(reverse ? SortField.STRING_FIRST : SortField.STRING_LAST);
      else if (missingFirst) sf.setMissingValue(reverse ? SortField.STRING_LAST : SortField.STRING_FIRST);
      return sf;
    }
    SortField.Type type;
    Object low, high;
    switch (k) {
      case INT: type = SortField.Type.INT; low = Integer.MIN_VALUE; high = Integer.MAX_VALUE; break;
      case FLOAT: type = SortField.Type.FLOAT; low = Float.NEGATIVE_INFINITY; high = Float.POSITIVE_INFINITY; break;
      case DOUBLE: type = SortField.Type.DOUBLE; low = Double.NEGATIVE_INFINITY; high = Double.POSITIVE_INFINITY; break;
      default: type = SortField.Type.LONG; low = Long.MIN_VALUE; high = Long.MAX_VALUE;
    }
    sf = f.multiValued()
        ? new SortedNumericSortField(f.name, type, reverse, reverse ? SortedNumericSelector.Type.MAX : SortedNumericSelector.Type.MIN)
        : new SortField(f.name, type, reverse);
    if (missingLast) sf.setMissingValue(reverse ? low : high);
    else if (missingFirst) sf.setMissingValue(reverse ? high : low);
    return sf;
  }
}
