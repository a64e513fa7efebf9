package solrdev;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipException;
import java.util.zip.ZipInputStream;

/**
 * The SolrCloud admin APIs for one node, as far as deploying a configset needs them: the
 * Configsets API (UPLOAD, LIST) and the Collections API (CREATE, RELOAD, LIST). Configsets are
 * kept on disk where ZooKeeper would keep them; a collection is one core (whatever numShards and
 * replicationFactor say) that reads its configset's files, so that an UPLOAD with overwrite
 * followed by a RELOAD applies the new files, as in SolrCloud. Every other action is a 400.
 */
final class Cloud {
  /** Solr's rule for collection and configset names (SolrIdentifierValidator). */
  private static final String IDENTIFIER = "(?!-)[._A-Za-z0-9-]+";

  /** Creates, registers and persists a collection's core. */
  interface CoreFactory {
    Core create(String name, Path configSetDir) throws Exception;
  }

  private final Path configSetsDir;
  private final Map<String, Core> cores;
  private final CoreFactory factory;
  private final String nodeName;

  /**
   * configSetsDir: where uploaded configsets live; its name must not be a valid core name (cores
   * are directories of the same data directory).
   */
  Cloud(Path configSetsDir, Map<String, Core> cores, CoreFactory factory, int port) {
    this.configSetsDir = configSetsDir;
    this.cores = cores;
    this.factory = factory;
    this.nodeName = "127.0.0.1:" + port + "_solr";
  }

  // ------------------------------------------------------------------ Configsets API

  Map<String, Object> configs(Params p, String method, byte[] body) throws IOException {
    String action = p.get("action", "").toUpperCase(Locale.ROOT);
    Map<String, Object> out = new LinkedHashMap<>();
    switch (action) {
      case "LIST":
        out.put("configSets", new ArrayList<>(configSetNames()));
        return out;
      case "UPLOAD":
        upload(p, method, body);
        return out;
      default:
        throw SolrError.unsupported("the configsets action " + (action.isEmpty() ? "(none)" : action) + " (UPLOAD and LIST only)");
    }
  }

  private TreeSet<String> configSetNames() throws IOException {
    TreeSet<String> names = new TreeSet<>();
    if (!Files.isDirectory(configSetsDir)) return names;
    try (Stream<Path> dirs = Files.list(configSetsDir)) {
      dirs.filter(Files::isDirectory).map(d -> d.getFileName().toString()).filter(n -> n.matches(IDENTIFIER)).forEach(names::add);
    }
    return names;
  }

  private synchronized void upload(Params p, String method, byte[] body) throws IOException {
    if (!method.equals("POST") && !method.equals("PUT")) throw SolrError.bad("UPLOAD needs the zip file as a POST or PUT body");
    String name = required(p, "name");
    if (!name.matches(IDENTIFIER)) throw SolrError.bad("Invalid configset name: " + name);
    if (p.has("filePath")) throw SolrError.unsupported("uploading a single file (filePath)");
    Path target = configSetsDir.resolve(name);
    boolean exists = Files.isDirectory(target);
    if (exists && !p.getBool("overwrite", false)) throw SolrError.bad("The configuration " + name + " already exists");
    if (body == null || body.length == 0) throw SolrError.bad("The configset UPLOAD needs a zip file as the request body");

    Files.createDirectories(configSetsDir);
    // "@" is in no configset name: LIST never shows an upload in progress (or one a crash left).
    Path staging = Files.createTempDirectory(configSetsDir, "@upload-");
    try {
      // Without cleanup, the files the new zip lacks are kept.
      if (exists && !p.getBool("cleanup", false)) copyTree(target, staging);
      if (unzip(body, staging) == 0) throw SolrError.bad("The configset UPLOAD body is not a zip file, or an empty one");
      if (exists) deleteTree(target);
      Files.move(staging, target, StandardCopyOption.ATOMIC_MOVE);
    } finally {
      deleteTree(staging);
    }
  }

  /** Unpacks `zip` into `dir`; returns the number of files. Entries may not leave `dir`. */
  private static int unzip(byte[] zip, Path dir) throws IOException {
    int files = 0;
    try (ZipInputStream in = new ZipInputStream(new ByteArrayInputStream(zip))) {
      for (ZipEntry e = in.getNextEntry(); e != null; e = in.getNextEntry()) {
        Path to = dir.resolve(e.getName()).normalize();
        if (!to.startsWith(dir) || to.equals(dir)) throw SolrError.bad("Invalid path in the configset zip: " + e.getName());
        if (e.isDirectory()) {
          Files.createDirectories(to);
          continue;
        }
        Files.createDirectories(to.getParent());
        // readAllBytes checks the entry's CRC-32 and size at its end (ZipException when wrong).
        Files.write(to, in.readAllBytes());
        files++;
      }
    } catch (ZipException e) {
      throw SolrError.bad("The configset zip is damaged: " + e.getMessage());
    }
    return files;
  }

  // ------------------------------------------------------------------ Collections API

  Map<String, Object> collections(Params p) throws Exception {
    String action = p.get("action", "").toUpperCase(Locale.ROOT);
    Map<String, Object> out = new LinkedHashMap<>();
    switch (action) {
      case "LIST": {
        List<String> names = new ArrayList<>();
        cores.values().stream().filter(c -> c.collection).map(c -> c.name).sorted().forEach(names::add);
        out.put("collections", names);
        return out;
      }
      case "CREATE":
        out.put("success", success(create(p)));
        return out;
      case "RELOAD": {
        Core c = collection(required(p, "name"));
        c.reload();
        out.put("success", success(c));
        return out;
      }
      default:
        throw SolrError.unsupported("the collections action " + (action.isEmpty() ? "(none)" : action) + " (CREATE, RELOAD and LIST only)");
    }
  }

  private Core create(Params p) throws Exception {
    String name = required(p, "name");
    if (!name.matches(IDENTIFIER)) throw SolrError.bad("Invalid collection name: " + name);
    String router = p.get("router.name", "compositeId");
    if (!router.equals("compositeId")) throw SolrError.unsupported("router.name=" + router + " (compositeId only)");
    if (!p.has("numShards")) throw SolrError.bad("numShards is a required param (when using CompositeId router).");
    positive(p, "numShards");
    positive(p, "replicationFactor");
    String configName = p.get("collection.configName");
    if (configName == null) throw SolrError.unsupported("CREATE without collection.configName (there is no _default configset here)");
    Path configSet = configSetsDir.resolve(configName).normalize();
    if (!configName.matches(IDENTIFIER) || !Files.isDirectory(configSet)) {
      throw SolrError.bad("Can not find the specified config set: " + configName);
    }
    synchronized (cores) {
      if (cores.containsKey(name)) throw SolrError.bad("collection already exists: " + name);
      try {
        return factory.create(name, configSet);
      } catch (SolrError e) {
        throw e;
      } catch (Exception e) {
        throw SolrError.bad("Error CREATEing collection '" + name + "': " + e.getMessage());
      }
    }
  }

  private Core collection(String name) {
    Core c = cores.get(name);
    if (c == null || !c.collection) throw SolrError.bad("Could not find collection : " + name);
    return c;
  }

  /** The per-node part of a Collections API answer. */
  private Map<String, Object> success(Core c) {
    Map<String, Object> node = new LinkedHashMap<>();
    node.put("core", c.name);
    Map<String, Object> out = new LinkedHashMap<>();
    out.put(nodeName, node);
    return out;
  }

  private static String required(Params p, String name) {
    String v = p.get(name);
    if (v == null || v.isEmpty()) throw SolrError.bad("Missing required parameter: " + name);
    return v;
  }

  private static void positive(Params p, String name) {
    String v = p.get(name);
    if (v == null) return;
    int n;
    try {
      n = Integer.parseInt(v.trim());
    } catch (NumberFormatException e) {
      throw SolrError.bad("Invalid integer value for " + name + ": " + v);
    }
    if (n < 1) throw SolrError.bad(name + " must be greater than 0: " + v);
  }

  // ------------------------------------------------------------------ files

  private static void copyTree(Path from, Path to) throws IOException {
    try (Stream<Path> s = Files.walk(from)) {
      for (Path x : (Iterable<Path>) s::iterator) {
        Path dest = to.resolve(from.relativize(x).toString());
        if (Files.isDirectory(x)) Files.createDirectories(dest);
        else Files.copy(x, dest, StandardCopyOption.REPLACE_EXISTING);
      }
    }
  }

  static void deleteTree(Path dir) throws IOException {
    if (!Files.exists(dir)) return;
    try (Stream<Path> s = Files.walk(dir)) {
      for (Path x : (Iterable<Path>) s.sorted(Comparator.reverseOrder())::iterator) Files.delete(x);
    }
  }
}
