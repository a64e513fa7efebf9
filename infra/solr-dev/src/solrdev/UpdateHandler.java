package solrdev;

import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import org.apache.lucene.search.Query;
import solrdev.Schema.Kind;

/**
 * /update and /update/json: Solr's JSON update commands (JsonLoader), atomic updates
 * (AtomicUpdateDocumentMerger), optimistic concurrency on _version_, and the commit parameters.
 * Commands run in order; as in Solr, those before a failing one stay applied.
 */
final class UpdateHandler {
  private static final String VERSION = "_version_";
  private static final Set<String> COMMIT_OPTIONS = Set.of(
      "waitSearcher", "waitFlush", "openSearcher", "softCommit", "expungeDeletes", "maxSegments",
      "maxOptimizeSegments", "prepareCommit");

  /** An atomic-update operation found as a field value: {"set": …}, {"add": …}, … */
  private static final class Op {
    final String name;
    final Object value;

    Op(String name, Object value) {
      this.name = name;
      this.value = value;
    }
  }

  private final Core core;
  private final Schema schema;
  private final Params params;
  private final Instant now;
  private final int commitWithin;
  private final boolean overwrite;

  private UpdateHandler(Core core, Params params, Instant now) {
    this.core = core;
    this.schema = core.schema;
    this.params = params;
    this.now = now;
    this.commitWithin = params.getInt("commitWithin", -1);
    this.overwrite = params.getBool("overwrite", true);
  }

  static void handle(Core core, Params params, String body, Instant now) throws IOException {
    for (String unsupported : List.of("prepareCommit", "versions", "update.chain", "processor")) {
      if (params.has(unsupported)) throw SolrError.unsupported("the update parameter " + unsupported);
    }
    UpdateHandler h = new UpdateHandler(core, params, now);
    boolean rollback = params.getBool("rollback", false), optimize = params.getBool("optimize", false);
    boolean commit = optimize || params.getBool("commit", false) || params.getBool("softCommit", false);
    // ContentStreamHandlerBase: a request without a body must at least commit or roll back.
    if (body == null && !commit && !rollback) throw SolrError.bad("missing content stream");
    synchronized (core.lock()) {
      if (body != null && !body.isBlank()) h.commands(Json.parse(body));
      if (rollback) core.rollback();
      if (commit) h.commit(new Json.Obj(), optimize);
    }
  }

  private void commands(Object parsed) throws IOException {
    if (parsed instanceof List) {
      adds((List<?>) parsed, commitWithin, overwrite);
      return;
    }
    if (!(parsed instanceof Json.Obj)) return; // Solr skips a bare value at the top level
    Json.Obj o = (Json.Obj) parsed;
    for (int i = 0; i < o.size(); i++) {
      String cmd = o.keys.get(i);
      Object v = o.values.get(i);
      switch (cmd) {
        case "add":
          if (v instanceof Json.Obj) add((Json.Obj) v);
          else if (v instanceof List) adds((List<?>) v, commitWithin, overwrite);
          else throw SolrError.bad("Expected: OBJECT_START but got " + describe(v));
          break;
        case "commit":
          commit(options(v), false);
          break;
        case "optimize":
          commit(options(v), true);
          break;
        case "delete":
          delete(v);
          break;
        case "rollback":
          core.rollback();
          break;
        default:
          throw SolrError.bad("Unknown command '" + cmd + "'");
      }
    }
  }

  private static String describe(Object v) {
    if (v == null) return "NULL";
    if (v instanceof String) return "STRING";
    if (v instanceof Boolean) return "BOOLEAN";
    if (v instanceof Number) return "NUMBER";
    if (v instanceof List) return "ARRAY_START";
    return "OBJECT_START";
  }

  private static Json.Obj options(Object v) {
    if (!(v instanceof Json.Obj)) throw SolrError.bad("Expected: OBJECT_START but got " + describe(v));
    Json.Obj o = (Json.Obj) v;
    for (String k : o.keys) {
      if (!COMMIT_OPTIONS.contains(k)) throw SolrError.bad("Unknown commit parameter '" + k + "'");
    }
    return o;
  }

  /** Commit options come from the command object, defaulting to the request parameters. */
  private void commit(Json.Obj opts, boolean optimize) throws IOException {
    if (opts.has("prepareCommit") || params.has("prepareCommit")) throw SolrError.unsupported("prepareCommit");
    boolean soft = Params.toBool(option(opts, "softCommit"), false);
    boolean openSearcher = Params.toBool(option(opts, "openSearcher"), true);
    if (Params.toBool(option(opts, "expungeDeletes"), false)) core.expungeDeletes();
    if (optimize) {
      String max = option(opts, "maxSegments");
      core.optimize(Params.toInt(max != null ? max : option(opts, "maxOptimizeSegments"), 1), openSearcher);
    } else if (soft) {
      core.softCommit();
    } else {
      core.hardCommit(openSearcher);
    }
  }

  private String option(Json.Obj opts, String k) {
    Object v = opts.get(k);
    return v != null ? v.toString() : params.get(k);
  }

  private void adds(List<?> docs, int within, boolean overwrite) throws IOException {
    for (Object d : docs) {
      if (!(d instanceof Json.Obj)) throw SolrError.bad("Expected: OBJECT_START but got " + describe(d));
      addDoc(parseDoc((Json.Obj) d), within, overwrite);
    }
  }

  private void add(Json.Obj cmd) throws IOException {
    Json.Obj doc = null;
    int within = commitWithin;
    boolean ow = overwrite;
    for (int i = 0; i < cmd.size(); i++) {
      String k = cmd.keys.get(i);
      Object v = cmd.values.get(i);
      switch (k) {
        case "doc":
          if (doc != null) throw SolrError.bad("Multiple documents in same add command");
          if (!(v instanceof Json.Obj)) throw SolrError.bad("Expected: OBJECT_START but got " + describe(v));
          doc = (Json.Obj) v;
          break;
        case "overwrite":
          ow = Params.toBool(String.valueOf(v), true);
          break;
        case "commitWithin":
          within = ((Number) v).intValue();
          break;
        case "boost":
          break; // index-time boosts are ignored by Solr 9 too
        default:
          throw SolrError.bad("Unknown key '" + k + "'");
      }
    }
    if (doc == null) throw SolrError.bad("Missing solr document");
    addDoc(parseDoc(doc), within, ow);
  }

  /** JsonLoader.parseDoc: repeated keys add values; a one-key object not naming a field is an operation. */
  private Map<String, List<Object>> parseDoc(Json.Obj o) {
    Map<String, List<Object>> doc = new LinkedHashMap<>();
    for (int i = 0; i < o.size(); i++) {
      String name = o.keys.get(i);
      Object v = o.values.get(i);
      if (name.equals("_childDocuments_")) throw SolrError.unsupported("nested child documents");
      List<Object> values = doc.computeIfAbsent(name, k -> new ArrayList<>());
      if (v instanceof List) {
        for (Object item : (List<?>) v) {
          if (item instanceof Json.Obj || item instanceof List) throw SolrError.unsupported("nested child documents");
          values.add(item);
        }
      } else if (v instanceof Json.Obj) {
        Json.Obj m = (Json.Obj) v;
        if (m.size() != 1 || schema.field(m.keys.get(0)) != null) throw SolrError.unsupported("nested child documents");
        values.add(new Op(m.keys.get(0), m.values.get(0)));
      } else {
        values.add(v);
      }
    }
    return doc;
  }

  private void addDoc(Map<String, List<Object>> in, int within, boolean ow) throws IOException {
    boolean atomic = false;
    for (List<Object> values : in.values()) for (Object v : values) atomic |= v instanceof Op;
    List<Object> ids = in.get(schema.uniqueKey);
    if (ids == null || ids.isEmpty() || ids.get(0) == null || ids.get(0) instanceof Op) {
      throw SolrError.bad("Document is missing mandatory uniqueKey field: " + schema.uniqueKey);
    }
    String id = ids.get(0).toString();
    Long expected = versionOf(in.remove(VERSION));
    Map<String, List<Object>> existing = null;
    if (atomic || (expected != null && expected != 0)) existing = core.realTimeGet(id);
    checkVersion(id, expected, existing);
    Map<String, List<Object>> doc = atomic ? merge(id, existing, in) : in;
    long version = core.nextVersion();
    if (schema.field(VERSION) != null) {
      List<Object> v = new ArrayList<>();
      v.add(version);
      doc.put(VERSION, v);
    }
    try {
      core.add(Fields.build(schema, doc, now), ow);
    } catch (IllegalArgumentException e) {
      // Lucene's own limits, e.g. a term longer than 32766 bytes
      throw SolrError.bad("Exception writing document id " + id + " to the index; possible analysis error: " + e.getMessage());
    }
    if (within > 0) core.scheduleSoftCommit(within);
  }

  private static Long versionOf(List<Object> values) {
    if (values == null || values.isEmpty() || values.get(0) == null) return null;
    Object v = values.get(0);
    try {
      return v instanceof Number ? ((Number) v).longValue() : Long.parseLong(v.toString());
    } catch (NumberFormatException e) {
      throw SolrError.bad("Invalid _version_ " + v);
    }
  }

  /** Optimistic concurrency: &gt;1 must equal, 1 must exist, &lt;0 must not exist, 0 no check. */
  private void checkVersion(String id, Long expected, Map<String, List<Object>> existing) {
    if (expected == null || expected == 0) return;
    Long actual = existing == null ? null : versionOf(existing.get(VERSION));
    if (expected == 1) {
      if (existing == null) throw new SolrError(409, "Document not found for update.  id=" + id);
    } else if (expected < 0) {
      if (existing != null) throw new SolrError(409, "version conflict for " + id + " expected=" + expected + " actual=" + actual);
    } else if (actual == null || actual.longValue() != expected) {
      throw new SolrError(409, "version conflict for " + id + " expected=" + expected + " actual=" + (actual == null ? -1 : actual));
    }
  }

  /**
   * AtomicUpdateDocumentMerger: the stored document (copyField targets dropped, as they are
   * rebuilt) with each operation applied; plain values replace.
   */
  private Map<String, List<Object>> merge(String id, Map<String, List<Object>> existing, Map<String, List<Object>> update) {
    Map<String, List<Object>> doc = new LinkedHashMap<>();
    if (existing != null) {
      existing.forEach((k, v) -> {
        if (!k.equals(VERSION) && !schema.isCopyTarget(k)) doc.put(k, new ArrayList<>(v));
      });
    }
    for (Map.Entry<String, List<Object>> e : update.entrySet()) {
      String name = e.getKey();
      for (Object v : e.getValue()) {
        if (!(v instanceof Op)) {
          doc.put(name, new ArrayList<>(e.getValue()));
          break;
        }
        apply(id, doc, name, (Op) v);
      }
    }
    return doc;
  }

  private void apply(String id, Map<String, List<Object>> doc, String name, Op op) {
    List<Object> given = new ArrayList<>();
    if (op.value instanceof List) given.addAll((List<?>) op.value);
    else if (op.value != null) given.add(op.value);
    List<Object> current = doc.computeIfAbsent(name, k -> new ArrayList<>());
    switch (op.name) {
      case "set":
        current.clear();
        current.addAll(given);
        break;
      case "add":
        current.addAll(given);
        break;
      case "add-distinct":
        for (Object v : given) if (!contains(name, current, v)) current.add(v);
        break;
      case "remove":
        current.removeIf(c -> contains(name, given, c));
        break;
      case "removeregex": {
        List<Pattern> patterns = new ArrayList<>();
        for (Object g : given) patterns.add(Pattern.compile(g.toString()));
        current.removeIf(c -> patterns.stream().anyMatch(p -> p.matcher(c.toString()).matches()));
        break;
      }
      case "inc":
        Object sum = increment(name, current.isEmpty() ? null : current.get(0), op.value);
        current.clear();
        current.add(sum);
        break;
      default:
        throw SolrError.bad("Error:[doc=" + id + "] Unknown operation for the an atomic update: " + op.name);
    }
    if (current.isEmpty()) doc.remove(name);
  }

  private Schema.Field typed(String name) {
    Schema.Field f = schema.field(name);
    if (f == null) throw SolrError.bad("undefined field " + name);
    return f.usable();
  }

  private boolean contains(String name, List<Object> values, Object v) {
    Schema.Field f = typed(name);
    Object nv = Fields.toNative(f, v, now);
    for (Object c : values) if (Fields.toNative(f, c, now).equals(nv)) return true;
    return false;
  }

  private Object increment(String name, Object current, Object delta) {
    Schema.Field f = typed(name);
    if (delta == null) throw SolrError.bad("Invalid input 'null' for 'inc' on field " + name);
    Object d = Fields.toNative(f, delta, now);
    Object c = current == null ? null : Fields.toNative(f, current, now);
    switch (f.kind()) {
      case INT: return (c == null ? 0 : (Integer) c) + (Integer) d;
      case LONG: return (c == null ? 0L : (Long) c) + (Long) d;
      case FLOAT: return (c == null ? 0f : (Float) c) + (Float) d;
      case DOUBLE: return (c == null ? 0d : (Double) c) + (Double) d;
      default: throw SolrError.bad("'inc' is not supported on non-numeric field " + name + " of kind " + (f.kind() == Kind.DATE ? "date" : f.kind().name().toLowerCase()));
    }
  }

  // JsonLoader.handleDeleteCommand: "id", ["id1","id2"], {"id":…}, {"query":…}
  private void delete(Object v) throws IOException {
    if (v instanceof List) {
      for (Object item : (List<?>) v) deleteOne(item);
    } else {
      deleteOne(v);
    }
  }

  private void deleteOne(Object v) throws IOException {
    if (!(v instanceof Json.Obj)) {
      if (v == null) throw SolrError.bad("Missing id or query for delete");
      deleteId(v.toString(), null, commitWithin);
      return;
    }
    Json.Obj o = (Json.Obj) v;
    String id = null, query = null;
    Long version = null;
    int within = commitWithin;
    for (int i = 0; i < o.size(); i++) {
      String k = o.keys.get(i);
      Object val = o.values.get(i);
      switch (k) {
        case "id": id = val == null ? null : val.toString(); break;
        case "query": query = val == null ? null : val.toString(); break;
        case "commitWithin": within = ((Number) val).intValue(); break;
        case VERSION: version = versionOf(List.of(val)); break;
        default: throw SolrError.bad("Unknown key '" + k + "'");
      }
    }
    if (id == null && query == null) throw SolrError.bad("Missing id or query for delete");
    if (id != null) deleteId(id, version, within);
    else deleteQuery(query, within);
  }

  private void deleteId(String id, Long version, int within) throws IOException {
    if (version != null && version != 0) checkVersion(id, version, core.realTimeGet(id));
    core.deleteById(id);
    if (within > 0) core.scheduleSoftCommit(within);
  }

  private void deleteQuery(String q, int within) throws IOException {
    QueryParser parser = new QueryParser(schema, params.get("df"), params.get("q.op"), params.getBool("sow", false), now);
    Query query = SearchHandler.makeQueryable(parser.parse(q));
    core.deleteByQuery(query);
    if (within > 0) core.scheduleSoftCommit(within);
  }
}
