package solrdev;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.DelegatingAnalyzerWrapper;
import org.apache.lucene.analysis.core.KeywordAnalyzer;
import org.w3c.dom.Element;

/**
 * A Solr schema.xml (or managed-schema.xml): field types, fields, dynamic fields, copyFields and
 * the uniqueKey, with Solr's rules for property defaults (which depend on the schema version).
 */
final class Schema {
  enum Kind {
    STRING, TEXT, BOOL, INT, LONG, FLOAT, DOUBLE, DATE;

    /** Point-based types: numbers and dates. */
    boolean isPoint() {
      return ordinal() >= INT.ordinal();
    }
  }

  // Solr's FieldProperties bits and their attribute names.
  static final int INDEXED = 1, TOKENIZED = 2, STORED = 4, BINARY = 8, OMIT_NORMS = 16,
      OMIT_TF_POSITIONS = 32, STORE_TERMVECTORS = 64, STORE_TERMPOSITIONS = 128,
      STORE_TERMOFFSETS = 256, MULTIVALUED = 512, SORT_MISSING_FIRST = 1024,
      SORT_MISSING_LAST = 2048, REQUIRED = 4096, OMIT_POSITIONS = 8192, STORE_OFFSETS = 16384,
      DOC_VALUES = 32768, STORE_TERMPAYLOADS = 65536, USE_DOCVALUES_AS_STORED = 131072,
      LARGE_FIELD = 262144, UNINVERTIBLE = 524288;
  private static final String[] PROPERTY_NAMES = {
    "indexed", "tokenized", "stored", "binary", "omitNorms", "omitTermFreqAndPositions",
    "termVectors", "termPositions", "termOffsets", "multiValued", "sortMissingFirst",
    "sortMissingLast", "required", "omitPositions", "storeOffsetsWithPositions", "docValues",
    "termPayloads", "useDocValuesAsStored", "large", "uninvertible"
  };

  private static final Map<String, Kind> CLASSES = Map.ofEntries(
      Map.entry("StrField", Kind.STRING), Map.entry("TextField", Kind.TEXT),
      Map.entry("BoolField", Kind.BOOL),
      Map.entry("IntPointField", Kind.INT), Map.entry("TrieIntField", Kind.INT),
      Map.entry("LongPointField", Kind.LONG), Map.entry("TrieLongField", Kind.LONG),
      Map.entry("FloatPointField", Kind.FLOAT), Map.entry("TrieFloatField", Kind.FLOAT),
      Map.entry("DoublePointField", Kind.DOUBLE), Map.entry("TrieDoubleField", Kind.DOUBLE),
      Map.entry("DatePointField", Kind.DATE), Map.entry("TrieDateField", Kind.DATE));

  /** A fieldType. kind is null when the class has no equivalent here (see unsupported). */
  static final class FieldType {
    final String name;
    final String className;
    final Kind kind;
    final int props;
    final Analyzer index;
    final Analyzer query;
    final Analyzer multiTerm;
    final boolean autoGeneratePhraseQueries;
    final boolean enableGraphQueries;
    final String unsupported;

    FieldType(String name, String className, Kind kind, int props, Analysis.Chain chain,
        boolean autoPhrase, boolean graph, String unsupported) {
      this.name = name;
      this.className = className;
      this.kind = kind;
      this.props = props;
      this.index = chain == null ? KEYWORD : chain.index;
      this.query = chain == null ? KEYWORD : chain.query;
      this.multiTerm = chain == null ? null : chain.multiTerm;
      this.autoGeneratePhraseQueries = autoPhrase;
      this.enableGraphQueries = graph;
      this.unsupported = unsupported;
    }
  }

  private static final Analyzer KEYWORD = new KeywordAnalyzer();

  /** A field, or a dynamic field's instance for one concrete name. */
  static final class Field {
    final String name;
    final FieldType type;
    final int props;
    final String defaultValue;
    /** The attributes as declared, less name and type (the Schema API shows these). */
    final Map<String, String> declared;

    Field(String name, FieldType type, int props, String defaultValue, Map<String, String> declared) {
      this.name = name;
      this.type = type;
      this.props = props;
      this.defaultValue = defaultValue;
      this.declared = declared;
    }

    Field rename(String concrete) {
      return new Field(concrete, type, props, defaultValue, declared);
    }

    boolean has(int prop) {
      return (props & prop) != 0;
    }

    boolean indexed() { return has(INDEXED); }
    boolean stored() { return has(STORED); }
    boolean docValues() { return has(DOC_VALUES); }
    boolean multiValued() { return has(MULTIVALUED); }
    boolean required() { return has(REQUIRED); }
    Kind kind() { return type.kind; }

    /** Returned by fl=* and real-time get: stored, or docValues used as stored. */
    boolean retrievable() {
      return stored() || (docValues() && has(USE_DOCVALUES_AS_STORED));
    }

    /** Throws the 400 every use of a field of an unsupported type gets. */
    Field usable() {
      if (type.unsupported != null) {
        throw SolrError.unsupported("field '" + name + "': field type '" + type.name + "' ("
            + type.className + "): " + type.unsupported);
      }
      return this;
    }
  }

  private static final class Dynamic {
    final String pattern;
    final Field prototype;

    Dynamic(String pattern, Field prototype) {
      this.pattern = pattern;
      this.prototype = prototype;
    }
  }

  private static final class CopyField {
    final String source;
    final String dest;
    final int maxChars;

    CopyField(String source, String dest, int maxChars) {
      this.source = source;
      this.dest = dest;
      this.maxChars = maxChars;
    }
  }

  /** A copyField destination for one source value, with its maxChars (0: no limit). */
  static final class CopyTarget {
    final Field field;
    final int maxChars;

    CopyTarget(Field field, int maxChars) {
      this.field = field;
      this.maxChars = maxChars;
    }
  }

  final Path file;
  final float version;
  final String uniqueKey;
  final Map<String, FieldType> types = new LinkedHashMap<>();
  final Map<String, Field> fields = new LinkedHashMap<>();
  private final List<Dynamic> dynamics = new ArrayList<>();
  private final List<CopyField> copyFields = new ArrayList<>();
  private final Map<String, Field> dynamicCache = new ConcurrentHashMap<>();
  final Analyzer indexAnalyzer = new PerField(true);
  final Analyzer queryAnalyzer = new PerField(false);

  /** The schema file a configset's conf directory holds, in Solr's order of preference. */
  static Path findFile(Path confDir) {
    for (String name : List.of("managed-schema.xml", "managed-schema", "schema.xml")) {
      Path p = confDir.resolve(name);
      if (Files.isRegularFile(p)) return p;
    }
    return null;
  }

  static Schema load(Path confDir) throws Exception {
    Path file = findFile(confDir);
    if (file == null) throw new IllegalArgumentException("no schema.xml or managed-schema.xml in " + confDir);
    return new Schema(file, Xml.load(file));
  }

  private Schema(Path file, Element root) {
    this.file = file;
    String v = Xml.attr(root, "version");
    this.version = v == null ? 1.0f : Float.parseFloat(v);
    // Solr 9 keeps fieldType/field elements either at the top or inside <types>/<fields>.
    List<Element> top = new ArrayList<>(Xml.children(root));
    for (Element wrapper : Xml.children(root, "types", "fields")) top.addAll(Xml.children(wrapper));
    for (Element e : top) {
      if (e.getTagName().equals("fieldType") || e.getTagName().equals("fieldtype")) {
        FieldType t = fieldType(e, file.getParent());
        types.put(t.name, t);
      }
    }
    for (Element e : top) {
      if (e.getTagName().equals("field")) {
        Field f = field(e);
        fields.put(f.name, f);
      } else if (e.getTagName().equals("dynamicField")) {
        Field f = field(e);
        if (!f.name.startsWith("*") && !f.name.endsWith("*")) {
          throw new IllegalArgumentException("dynamicField name must start or end with '*': " + f.name);
        }
        dynamics.add(new Dynamic(f.name, f));
      }
    }
    // Solr tries the longest dynamic field pattern first.
    dynamics.sort(Comparator.comparingInt((Dynamic d) -> d.pattern.length()).reversed());
    for (Element e : top) {
      if (e.getTagName().equals("copyField")) {
        String src = Xml.attr(e, "source"), dest = Xml.attr(e, "dest");
        String max = Xml.attr(e, "maxChars");
        if (!dest.contains("*") && field(dest) == null) {
          throw new IllegalArgumentException("copyField dest :'" + dest + "' is not an explicit field and doesn't match a dynamicField.");
        }
        copyFields.add(new CopyField(src, dest, max == null ? 0 : Integer.parseInt(max)));
      } else if (e.getTagName().equals("similarity")) {
        String cls = Xml.attr(e, "class");
        if (cls != null && !cls.endsWith("SchemaSimilarityFactory") && !cls.endsWith("BM25SimilarityFactory")) {
          throw new IllegalArgumentException("similarity " + cls + " is not supported (solr-dev scores with BM25)");
        }
      }
    }
    String key = null;
    for (Element e : top) if (e.getTagName().equals("uniqueKey")) key = Xml.text(e);
    if (key == null) throw new IllegalArgumentException("solr-dev needs a <uniqueKey> in the schema");
    Field kf = field(key);
    if (kf == null) throw new IllegalArgumentException("uniqueKey field " + key + " is not defined");
    if (kf.kind() != Kind.STRING || kf.multiValued() || !kf.indexed()) {
      throw new IllegalArgumentException("uniqueKey field " + key + " must be an indexed, single-valued StrField in solr-dev");
    }
    this.uniqueKey = key;
  }

  private FieldType fieldType(Element e, Path confDir) {
    Map<String, String> attrs = Xml.attributes(e);
    String name = attrs.get("name"), cls = attrs.get("class");
    String simple = cls == null ? "" : cls.substring(cls.lastIndexOf('.') + 1);
    Kind kind = CLASSES.get(simple);
    String unsupported = kind == null ? "this field type class is not supported" : null;
    boolean text = kind == Kind.TEXT;
    boolean primitive = kind != null && !text;

    // FieldType.setArgs: defaults depend on the schema version.
    int p = STORED | INDEXED;
    if (version < 1.1f) p |= MULTIVALUED;
    if (version > 1.1f) p |= OMIT_TF_POSITIONS;
    if (version >= 1.6f) p |= USE_DOCVALUES_AS_STORED;
    if (version >= 1.7f && primitive) p |= DOC_VALUES;
    if (version < 1.7f) p |= UNINVERTIBLE;
    if (text) {
      p |= TOKENIZED;
      p &= ~OMIT_TF_POSITIONS;
    }
    int trueProps = parseProps(attrs, true), falseProps = parseProps(attrs, false);
    p &= ~falseProps;
    p |= trueProps;
    if (primitive && version > 1.4f && (falseProps & OMIT_NORMS) == 0) p |= OMIT_NORMS;

    Analysis.Chain chain = null;
    if (text) {
      try {
        String gap = attrs.get("positionIncrementGap");
        chain = Analysis.build(e, confDir, gap == null ? null : Integer.valueOf(gap));
      } catch (IllegalArgumentException ex) {
        unsupported = ex.getMessage();
      }
    }
    boolean autoPhrase = Params.toBool(attrs.get("autoGeneratePhraseQueries"), false);
    boolean graph = Params.toBool(attrs.get("enableGraphQueries"), true);
    return new FieldType(name, cls, kind, p, chain, autoPhrase, graph, unsupported);
  }

  private Field field(Element e) {
    Map<String, String> attrs = Xml.attributes(e);
    String name = attrs.remove("name"), typeName = attrs.remove("type");
    FieldType type = types.get(typeName);
    if (type == null) throw new IllegalArgumentException("Unknown fieldType '" + typeName + "' specified on field " + name);
    return new Field(name, type, fieldProps(name, type, attrs), attrs.get("default"), Collections.unmodifiableMap(attrs));
  }

  /** Solr's SchemaField.calcProps: a field's declared properties over its type's. */
  private static int fieldProps(String name, FieldType type, Map<String, String> attrs) {
    int t = parseProps(attrs, true), f = parseProps(attrs, false), p = type.props;
    if ((f & STORED) != 0) p &= ~(STORED | BINARY | LARGE_FIELD);
    if ((f & INDEXED) != 0) {
      p &= ~(INDEXED | STORE_TERMVECTORS | STORE_TERMPOSITIONS | STORE_TERMOFFSETS
          | STORE_TERMPAYLOADS | UNINVERTIBLE | OMIT_NORMS | OMIT_TF_POSITIONS | OMIT_POSITIONS);
    }
    if ((f & UNINVERTIBLE) != 0 && (f & DOC_VALUES) != 0) p &= ~(SORT_MISSING_FIRST | SORT_MISSING_LAST);
    if ((t & OMIT_TF_POSITIONS) != 0) p &= ~(OMIT_POSITIONS | OMIT_TF_POSITIONS);
    if ((t & SORT_MISSING_FIRST) != 0) p &= ~SORT_MISSING_LAST;
    if ((t & SORT_MISSING_LAST) != 0) p &= ~SORT_MISSING_FIRST;
    p &= ~f;
    p |= t;
    if ((p & TOKENIZED) == 0 && type.kind == Kind.TEXT) p |= TOKENIZED;
    return p;
  }

  private static int parseProps(Map<String, String> attrs, boolean which) {
    int bits = 0;
    for (int i = 0; i < PROPERTY_NAMES.length; i++) {
      String v = attrs.get(PROPERTY_NAMES[i]);
      if (v != null && Params.toBool(v, false) == which) bits |= 1 << i;
    }
    return bits;
  }

  static boolean isBooleanProperty(String attr) {
    for (String n : PROPERTY_NAMES) if (n.equals(attr)) return true;
    return false;
  }

  /** The field (static or dynamic) of this name, or null. */
  Field field(String name) {
    Field f = fields.get(name);
    if (f != null) return f;
    Field cached = dynamicCache.get(name);
    if (cached != null) return cached;
    for (Dynamic d : dynamics) {
      if (globMatches(d.pattern, name)) {
        Field concrete = d.prototype.rename(name);
        dynamicCache.put(name, concrete);
        return concrete;
      }
    }
    return null;
  }

  /** Solr's message for a field name that is neither declared nor dynamic. */
  Field fieldOrThrow(String name) {
    Field f = field(name);
    if (f == null) throw SolrError.bad("undefined field " + name);
    return f.usable();
  }

  List<CopyTarget> copyTargets(String source) {
    List<CopyTarget> out = new ArrayList<>();
    for (CopyField cf : copyFields) {
      if (!globMatches(cf.source, source)) continue;
      String dest = cf.dest;
      if (dest.contains("*")) {
        String star = cf.source.startsWith("*") ? source.substring(0, source.length() - (cf.source.length() - 1))
            : source.substring(cf.source.length() - 1);
        dest = dest.replace("*", star);
      }
      Field f = field(dest);
      if (f != null) out.add(new CopyTarget(f, cf.maxChars));
    }
    return out;
  }

  boolean isCopyTarget(String name) {
    for (CopyField cf : copyFields) {
      if (cf.dest.equals(name) || (cf.dest.contains("*") && globMatches(cf.dest, name))) return true;
    }
    return false;
  }

  /** Solr's patterns have one '*' at the start or end; "*" alone matches everything. */
  static boolean globMatches(String pattern, String name) {
    if (pattern.equals("*")) return true;
    if (pattern.startsWith("*")) return name.endsWith(pattern.substring(1));
    if (pattern.endsWith("*")) return name.startsWith(pattern.substring(0, pattern.length() - 1));
    return pattern.equals(name);
  }

  /** Schema API form of a field: name, type, then its declared properties. */
  static Map<String, Object> describe(Field f) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("name", f.name);
    m.put("type", f.type.name);
    f.declared.forEach((k, v) -> m.put(k, isBooleanProperty(k) ? (Object) Params.toBool(v, false) : v));
    return m;
  }

  List<Field> dynamicPrototypes() {
    List<Field> out = new ArrayList<>();
    for (Dynamic d : dynamics) out.add(d.prototype);
    return out;
  }

  /** Per-field analyzers for the index writer, the highlighter and query parsing. */
  private final class PerField extends DelegatingAnalyzerWrapper {
    private final boolean indexSide;

    PerField(boolean indexSide) {
      super(PER_FIELD_REUSE_STRATEGY);
      this.indexSide = indexSide;
    }

    @Override
    protected Analyzer getWrappedAnalyzer(String fieldName) {
      Field f = field(fieldName);
      if (f == null || f.type.unsupported != null) return KEYWORD;
      return indexSide ? f.type.index : f.type.query;
    }
  }
}
