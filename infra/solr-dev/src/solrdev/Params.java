package solrdev;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Request parameters as Solr sees them: a multimap in request order, layered with handler
 * defaults, invariants and appends from solrconfig.xml. {@link #explicit} keeps what the client
 * sent, which is what {@code echoParams=explicit} echoes.
 */
final class Params {
  private final LinkedHashMap<String, List<String>> map = new LinkedHashMap<>();
  private Params explicit = this;

  static Params parseQuery(String raw) {
    Params p = new Params();
    p.addQuery(raw);
    return p;
  }

  void addQuery(String raw) {
    if (raw == null || raw.isEmpty()) return;
    for (String pair : raw.split("&")) {
      if (pair.isEmpty()) continue;
      int eq = pair.indexOf('=');
      String k = decode(eq < 0 ? pair : pair.substring(0, eq));
      String v = eq < 0 ? "" : decode(pair.substring(eq + 1));
      if (!k.isEmpty()) add(k, v);
    }
  }

  private static String decode(String s) {
    try {
      return URLDecoder.decode(s, StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      throw SolrError.bad("URLDecoder: " + e.getMessage());
    }
  }

  void add(String k, String v) {
    map.computeIfAbsent(k, x -> new ArrayList<>()).add(v);
  }

  void set(String k, String v) {
    List<String> l = new ArrayList<>();
    l.add(v);
    map.put(k, l);
  }

  /** This request's params with solrconfig defaults under, appends after and invariants over. */
  Params withHandlerConfig(SolrConfig.HandlerParams hp) {
    Params out = new Params();
    out.explicit = this;
    if (hp != null) hp.defaults.forEach((k, v) -> out.map.put(k, new ArrayList<>(v)));
    map.forEach((k, v) -> out.map.put(k, new ArrayList<>(v)));
    if (hp != null) {
      hp.appends.forEach((k, v) -> out.map.computeIfAbsent(k, x -> new ArrayList<>()).addAll(v));
      hp.invariants.forEach((k, v) -> out.map.put(k, new ArrayList<>(v)));
    }
    return out;
  }

  Params explicit() {
    return explicit;
  }

  String get(String k) {
    List<String> l = map.get(k);
    return l == null || l.isEmpty() ? null : l.get(0);
  }

  String get(String k, String def) {
    String v = get(k);
    return v == null ? def : v;
  }

  List<String> getAll(String k) {
    List<String> l = map.get(k);
    return l == null ? List.of() : l;
  }

  boolean has(String k) {
    return map.containsKey(k);
  }

  Iterable<String> names() {
    return map.keySet();
  }

  /** Solr's per-field override: f.&lt;field&gt;.&lt;param&gt; wins over &lt;param&gt;. */
  String fieldParam(String field, String k, String def) {
    String v = get("f." + field + "." + k);
    return v != null ? v : get(k, def);
  }

  int getInt(String k, int def) {
    return toInt(get(k), def);
  }

  int fieldInt(String field, String k, int def) {
    return toInt(fieldParam(field, k, null), def);
  }

  float fieldFloat(String field, String k, float def) {
    String v = fieldParam(field, k, null);
    if (v == null) return def;
    try {
      return Float.parseFloat(v);
    } catch (NumberFormatException e) {
      throw SolrError.bad("java.lang.NumberFormatException: For input string: \"" + v + "\"");
    }
  }

  boolean getBool(String k, boolean def) {
    return toBool(get(k), def);
  }

  boolean fieldBool(String field, String k, boolean def) {
    return toBool(fieldParam(field, k, null), def);
  }

  static int toInt(String v, int def) {
    if (v == null) return def;
    try {
      return Integer.parseInt(v.trim());
    } catch (NumberFormatException e) {
      throw SolrError.bad("java.lang.NumberFormatException: For input string: \"" + v + "\"");
    }
  }

  /** Solr's StrUtils.parseBool. */
  static boolean toBool(String v, boolean def) {
    if (v == null) return def;
    switch (v.trim()) {
      case "true": case "on": case "yes": return true;
      case "false": case "off": case "no": return false;
      default: throw SolrError.bad("invalid boolean value: " + v);
    }
  }

  /** The echo form of responseHeader.params: one value as a string, repeated values as an array. */
  Map<String, Object> toEcho() {
    Map<String, Object> out = new LinkedHashMap<>();
    map.forEach((k, v) -> out.put(k, v.size() == 1 ? v.get(0) : new ArrayList<>(v)));
    return out;
  }
}
