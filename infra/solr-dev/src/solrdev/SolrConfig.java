package solrdev;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.w3c.dom.Element;

/**
 * The parts of solrconfig.xml that change what a client sees: request-handler parameter
 * defaults (a configset usually sets df, rows or echoParams there) and the auto (soft) commit
 * timers, which decide when documents become visible. Everything else in the file is ignored;
 * docs/solr-dev.md lists it. A configset without solrconfig.xml gets Solr's built-in defaults
 * plus echoParams=explicit on /select, as the _default configset has.
 */
final class SolrConfig {
  /** defaults / appends / invariants of one handler. */
  static final class HandlerParams {
    final Map<String, List<String>> defaults = new LinkedHashMap<>();
    final Map<String, List<String>> appends = new LinkedHashMap<>();
    final Map<String, List<String>> invariants = new LinkedHashMap<>();
  }

  private final Map<String, HandlerParams> handlers = new LinkedHashMap<>();
  /** autoCommit maxTime in ms, or -1. */
  final long autoCommitMs;
  final boolean autoCommitOpensSearcher;
  /** autoSoftCommit maxTime in ms, or -1. */
  final long autoSoftCommitMs;

  private SolrConfig(long autoCommitMs, boolean opens, long autoSoftCommitMs) {
    this.autoCommitMs = autoCommitMs;
    this.autoCommitOpensSearcher = opens;
    this.autoSoftCommitMs = autoSoftCommitMs;
  }

  HandlerParams handler(String path) {
    return handlers.get(path);
  }

  static SolrConfig load(Path confDir) throws Exception {
    Path file = confDir.resolve("solrconfig.xml");
    if (!Files.exists(file)) {
      SolrConfig c = new SolrConfig(-1, true, -1);
      HandlerParams select = new HandlerParams();
      select.defaults.put("echoParams", new ArrayList<>(List.of("explicit")));
      c.handlers.put("/select", select);
      return c;
    }
    Element root = Xml.load(file);
    long hard = -1, soft = -1;
    boolean opens = true;
    for (Element uh : Xml.children(root, "updateHandler")) {
      for (Element ac : Xml.children(uh, "autoCommit")) {
        hard = longChild(ac, "maxTime", -1);
        for (Element os : Xml.children(ac, "openSearcher")) opens = Params.toBool(Xml.text(os), true);
      }
      for (Element asc : Xml.children(uh, "autoSoftCommit")) soft = longChild(asc, "maxTime", -1);
    }
    SolrConfig c = new SolrConfig(hard, opens, soft);
    // initParams apply first; a handler's own lists are layered over them, as in Solr.
    for (String path : List.of("/select", "/get", "/update")) {
      HandlerParams hp = new HandlerParams();
      for (Element ip : Xml.children(root, "initParams")) {
        String paths = Xml.attr(ip, "path");
        if (paths != null && pathMatches(paths, path)) readLists(ip, hp);
      }
      for (Element rh : Xml.children(root, "requestHandler")) {
        if (path.equals(Xml.attr(rh, "name"))) readLists(rh, hp);
      }
      c.handlers.put(path, hp);
    }
    return c;
  }

  private static long longChild(Element e, String name, long def) {
    for (Element c : Xml.children(e, name)) {
      String t = Xml.text(c);
      if (!t.isEmpty()) return Long.parseLong(t);
    }
    return def;
  }

  private static boolean pathMatches(String spec, String path) {
    for (String p : spec.split(",")) {
      p = p.trim();
      if (p.equals(path)) return true;
      if (p.endsWith("/**") && (path + "/").startsWith(p.substring(0, p.length() - 2))) return true;
      if (p.endsWith("/*") && path.startsWith(p.substring(0, p.length() - 1))
          && path.indexOf('/', p.length() - 1) < 0) return true;
    }
    return false;
  }

  private static void readLists(Element handler, HandlerParams hp) {
    for (Element lst : Xml.children(handler, "lst")) {
      String name = Xml.attr(lst, "name");
      Map<String, List<String>> target =
          "defaults".equals(name) ? hp.defaults
              : "appends".equals(name) ? hp.appends
              : "invariants".equals(name) ? hp.invariants : null;
      if (target == null) continue;
      for (Element v : Xml.children(lst)) {
        String key = Xml.attr(v, "name");
        if (key == null) continue;
        List<String> values = new ArrayList<>();
        if (v.getTagName().equals("arr")) {
          for (Element item : Xml.children(v)) values.add(Xml.text(item));
        } else {
          values.add(Xml.text(v));
        }
        if ("appends".equals(name)) target.computeIfAbsent(key, k -> new ArrayList<>()).addAll(values);
        else target.put(key, values);
      }
    }
  }
}
