package solrdev;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.stream.Stream;

/**
 * The HTTP side: routes Solr's URLs to the handlers, writes Solr's JSON envelopes (responseHeader,
 * error shape), serves core admin, the read-only Schema API, admin/file and ping, and owns the
 * process: command-line options, the cores on disk, PID file and clean SIGTERM shutdown.
 */
public final class Server {
  private final Map<String, Core> cores = new ConcurrentHashMap<>();
  private final Path dataDir;
  private final Path configSets;
  /** `Basic …` every request must carry (Solr's BasicAuthPlugin with blockUnknown), or null for none. */
  private String requiredAuthorization;
  private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "solr-dev-commits");
    t.setDaemon(true);
    return t;
  });

  /** The Configsets and Collections APIs; uploaded configsets live in DATA/@configsets ('@' is in no core name). */
  private final Cloud cloud;

  private Server(Path dataDir, Path configSets, int port) {
    this.dataDir = dataDir;
    this.configSets = configSets;
    this.cloud = new Cloud(dataDir.resolve("@configsets"), cores, this::createCollectionCore, port);
  }

  private Core createCollectionCore(String name, Path configSetDir) throws Exception {
    Core c = new Core(name, configSetDir, dataDir.resolve(name), timer);
    c.collection = true;
    c.persist();
    cores.put(name, c);
    return c;
  }

  public static void main(String[] args) throws Exception {
    int port = 8983;
    Path data = null, configSets = null, pidFile = null;
    String basicAuth = null;
    Map<String, Path> coreArgs = new LinkedHashMap<>();
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      String v = i + 1 < args.length ? args[i + 1] : null;
      switch (a) {
        case "--port": port = Integer.parseInt(v); i++; break;
        case "--data": data = Paths.get(v); i++; break;
        case "--configsets": configSets = Paths.get(v); i++; break;
        case "--pid-file": pidFile = Paths.get(v); i++; break;
        case "--basic-auth": basicAuth = v; i++; break;
        case "--core": {
          int eq = v == null ? -1 : v.indexOf('=');
          if (eq <= 0) usage("--core needs NAME=CONFIGSET_DIR");
          coreArgs.put(v.substring(0, eq), Paths.get(v.substring(eq + 1)));
          i++;
          break;
        }
        default: usage("unknown option " + a);
      }
    }
    if (data == null) usage("--data DIR is required");
    Files.createDirectories(data);
    Server s = new Server(data.toAbsolutePath(), configSets == null ? null : configSets.toAbsolutePath(), port);
    s.loadCores(coreArgs);
    if (basicAuth != null) {
      if (basicAuth.indexOf(':') <= 0) usage("--basic-auth needs USER:PASSWORD");
      s.requiredAuthorization = "Basic " + java.util.Base64.getEncoder().encodeToString(basicAuth.getBytes(StandardCharsets.UTF_8));
    }

    Http http = new Http(port, s::handle);
    Path pid = pidFile;
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      http.stop();
      s.closeAll();
      if (pid != null) {
        try {
          Files.deleteIfExists(pid);
        } catch (IOException ignored) {
          // nothing left to do at exit
        }
      }
      System.out.println("solr-dev stopped");
    }));
    http.start();
    if (pidFile != null) Files.writeString(pidFile, ProcessHandle.current().pid() + "\n");
    System.out.println("solr-dev listening on http://127.0.0.1:" + port + "/solr with cores " + new TreeMap<>(s.cores).keySet());
  }

  private static void usage(String why) {
    System.err.println("solr-dev: " + why);
    System.err.println("usage: Server --data DIR [--port P] [--core NAME=CONFIGSET_DIR]... [--configsets DIR] [--pid-file FILE] [--basic-auth USER:PASSWORD]");
    System.exit(2);
  }

  /** Cores recorded in the data directory from earlier runs, then the ones given on the command line. */
  private void loadCores(Map<String, Path> fromArgs) throws Exception {
    Map<String, Path> all = new LinkedHashMap<>();
    Map<String, Boolean> collections = new LinkedHashMap<>();
    try (Stream<Path> dirs = Files.list(dataDir)) {
      for (Path d : (Iterable<Path>) dirs::iterator) {
        Path props = d.resolve("core.properties");
        if (!Files.isRegularFile(props)) continue;
        Properties p = new Properties();
        try (Reader r = Files.newBufferedReader(props, StandardCharsets.UTF_8)) {
          p.load(r);
        }
        all.put(p.getProperty("name"), Paths.get(p.getProperty("configSet")));
        collections.put(p.getProperty("name"), Boolean.parseBoolean(p.getProperty("collection", "false")));
      }
    }
    all.putAll(fromArgs);
    for (Map.Entry<String, Path> e : all.entrySet()) {
      Core c = new Core(e.getKey(), e.getValue(), dataDir.resolve(e.getKey()), timer);
      c.collection = !fromArgs.containsKey(e.getKey()) && collections.getOrDefault(e.getKey(), false);
      c.persist();
      cores.put(c.name, c);
    }
  }

  private void closeAll() {
    for (Core c : cores.values()) {
      try {
        c.close();
      } catch (IOException | RuntimeException e) {
        System.err.println("solr-dev: closing core " + c.name + " failed: " + e);
      }
    }
  }

  // ------------------------------------------------------------------ HTTP

  /** What a handler answers: a JSON body, or raw bytes (admin/file). */
  private static final class Answer {
    final int status;
    final Map<String, Object> body;
    final byte[] raw;
    final String contentType;

    Answer(Map<String, Object> body) {
      this(200, body, null, null);
    }

    Answer(int status, Map<String, Object> body, byte[] raw, String contentType) {
      this.status = status;
      this.body = body;
      this.raw = raw;
      this.contentType = contentType;
    }
  }

  private Http.Response handle(Http.Request ex) {
    long started = System.nanoTime();
    Params echo = null;
    Answer answer;
    try {
      Params params = Params.parseQuery(ex.rawQuery);
      String contentType = ex.header("Content-Type");
      String body = ex.body.length == 0 ? null : new String(ex.body, StandardCharsets.UTF_8);
      if (contentType != null && contentType.startsWith("application/x-www-form-urlencoded")) {
        params.addQuery(body);
        body = null;
      }
      String wt = params.get("wt");
      if (wt != null && !wt.equals("json")) throw SolrError.unsupported("wt=" + wt + " (JSON only)");
      if (requiredAuthorization != null && !requiredAuthorization.equals(ex.header("Authorization"))) {
        throw new SolrError(401, ex.header("Authorization") == null ? "require authentication" : "Bad credentials");
      }
      String[] path = ex.path.replaceAll("/+$", "").split("/");
      if (path.length < 3 || !path[1].equals("solr")) throw new SolrError(404, "Not Found: " + ex.path);
      if (path[2].equals("admin")) {
        if (path.length == 4 && path[3].equals("cores")) answer = coreAdmin(params, started);
        else if (path.length == 4 && path[3].equals("configs")) answer = new Answer(envelope(cloud.configs(params, ex.method, ex.body), params, null, started));
        else if (path.length == 4 && path[3].equals("collections")) answer = new Answer(envelope(cloud.collections(params), params, null, started));
        else throw SolrError.unsupported("the path " + ex.path);
      } else {
        Core core = cores.get(path[2]);
        if (core == null) throw new SolrError(404, "No such core: " + path[2]);
        String rest = String.join("/", java.util.Arrays.copyOfRange(path, 3, path.length));
        // Errors echo the params too, so this is worked out before the handler runs.
        if (rest.equals("select") || rest.equals("get")) echo = echoed(params.withHandlerConfig(core.config.handler("/" + rest)));
        answer = route(core, rest, params, body, contentType, ex.method, started);
      }
    } catch (SolrError e) {
      answer = error(e.code, e.getMessage(), started, echo);
    } catch (Exception e) {
      System.err.println("solr-dev: " + ex.method + " " + ex.path + " failed");
      e.printStackTrace();
      answer = error(500, e.toString(), started, echo);
    }
    byte[] bytes = answer.raw != null ? answer.raw : Json.write(answer.body).getBytes(StandardCharsets.UTF_8);
    return new Http.Response(answer.status, answer.contentType != null ? answer.contentType : "application/json;charset=utf-8", bytes);
  }

  private Answer route(Core core, String rest, Params params, String body, String contentType, String method,
      long started) throws Exception {
    switch (rest) {
      case "select": {
        Params p = params.withHandlerConfig(core.config.handler("/select"));
        if (body != null && !body.isBlank()) throw SolrError.unsupported("the JSON Request API (a body on /select)");
        return new Answer(envelope(SearchHandler.select(core, p), p, echoed(p), started));
      }
      case "get": {
        Params p = params.withHandlerConfig(core.config.handler("/get"));
        // Solr's implicit /get handler defaults to omitHeader=true.
        if (!p.has("omitHeader")) p.set("omitHeader", "true");
        return new Answer(envelope(SearchHandler.get(core, p), p, echoed(p), started));
      }
      case "update":
      case "update/json": {
        Params p = params.withHandlerConfig(core.config.handler("/update"));
        if (body != null && contentType != null && !contentType.contains("json") && !contentType.startsWith("text/plain")) {
          throw SolrError.unsupported("update bodies of type " + contentType + " (JSON only)");
        }
        UpdateHandler.handle(core, p, body, Instant.now());
        return new Answer(envelope(new LinkedHashMap<>(), p, null, started));
      }
      case "admin/ping": {
        Params p = new Params();
        p.set("q", "{!lucene}*:*");
        p.set("distrib", "false");
        p.set("rows", "10");
        p.set("echoParams", "all");
        for (String k : params.names()) for (String v : params.getAll(k)) p.add(k, v);
        Map<String, Object> status = new LinkedHashMap<>();
        status.put("status", "OK");
        return new Answer(envelope(status, p, p, started));
      }
      case "admin/file":
        return file(core, params);
      case "schema/uniquekey": {
        readOnly(method);
        Map<String, Object> b = new LinkedHashMap<>();
        b.put("uniqueKey", core.schema.uniqueKey);
        return new Answer(envelope(b, params, null, started));
      }
      case "schema/fields": {
        readOnly(method);
        boolean defaults = params.getBool("showDefaults", false);
        List<Object> list = new ArrayList<>();
        core.schema.fields.values().stream().sorted(Comparator.comparing(f -> f.name))
            .forEach(f -> list.add(defaults ? withDefaults(f) : Schema.describe(f)));
        Map<String, Object> b = new LinkedHashMap<>();
        b.put("fields", list);
        return new Answer(envelope(b, params, null, started));
      }
      case "schema/dynamicfields": {
        readOnly(method);
        List<Object> list = new ArrayList<>();
        for (Schema.Field f : core.schema.dynamicPrototypes()) list.add(Schema.describe(f));
        Map<String, Object> b = new LinkedHashMap<>();
        b.put("dynamicFields", list);
        return new Answer(envelope(b, params, null, started));
      }
      default:
        if (rest.startsWith("schema/fields/")) {
          readOnly(method);
          String name = rest.substring("schema/fields/".length());
          Schema.Field f = core.schema.fields.get(name);
          if (f == null) throw new SolrError(404, "Field '" + name + "' not found.");
          Map<String, Object> b = new LinkedHashMap<>();
          b.put("field", params.getBool("showDefaults", false) ? withDefaults(f) : Schema.describe(f));
          return new Answer(envelope(b, params, null, started));
        }
        if (rest.equals("schema") || rest.startsWith("schema/")) {
          readOnly(method);
          throw SolrError.unsupported("the Schema API path /" + rest + " (fields, fields/NAME, dynamicfields and uniquekey only)");
        }
        throw SolrError.unsupported("the handler /" + rest);
    }
  }

  private static void readOnly(String method) {
    if (!method.equals("GET")) throw SolrError.unsupported("changing the schema through the Schema API (it is read-only here)");
  }

  /** showDefaults=true: every property with its effective value, as Solr lists them. */
  private static Map<String, Object> withDefaults(Schema.Field f) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("name", f.name);
    m.put("type", f.type.name);
    if (f.defaultValue != null) m.put("default", f.defaultValue);
    m.put("indexed", f.indexed());
    m.put("stored", f.stored());
    m.put("docValues", f.docValues());
    m.put("termVectors", f.has(Schema.STORE_TERMVECTORS));
    m.put("termPositions", f.has(Schema.STORE_TERMPOSITIONS));
    m.put("termOffsets", f.has(Schema.STORE_TERMOFFSETS));
    m.put("termPayloads", f.has(Schema.STORE_TERMPAYLOADS));
    m.put("omitNorms", f.has(Schema.OMIT_NORMS));
    m.put("omitTermFreqAndPositions", f.has(Schema.OMIT_TF_POSITIONS));
    m.put("omitPositions", f.has(Schema.OMIT_POSITIONS));
    m.put("storeOffsetsWithPositions", f.has(Schema.STORE_OFFSETS));
    m.put("multiValued", f.multiValued());
    m.put("large", f.has(Schema.LARGE_FIELD));
    m.put("uninvertible", f.has(Schema.UNINVERTIBLE));
    if (f.has(Schema.SORT_MISSING_FIRST)) m.put("sortMissingFirst", true);
    else if (f.has(Schema.SORT_MISSING_LAST)) m.put("sortMissingLast", true);
    m.put("required", f.required());
    m.put("tokenized", f.has(Schema.TOKENIZED));
    m.put("useDocValuesAsStored", f.has(Schema.USE_DOCVALUES_AS_STORED));
    return m;
  }

  private static Answer file(Core core, Params params) throws IOException {
    String name = params.get("file");
    if (name == null || name.isEmpty()) throw SolrError.unsupported("listing the conf directory (give file=NAME)");
    Path f = core.confDir.resolve(name).normalize();
    if (!f.startsWith(core.confDir.normalize()) || !Files.isRegularFile(f)) {
      throw new SolrError(404, "Can not find: " + name + " [" + f + "]");
    }
    String lower = name.toLowerCase(Locale.ROOT);
    String type = lower.endsWith(".xml") || lower.startsWith("managed-schema") ? "application/xml;charset=utf-8"
        : lower.endsWith(".json") ? "application/json;charset=utf-8" : "text/plain;charset=utf-8";
    return new Answer(200, null, Files.readAllBytes(f), type);
  }

  // ------------------------------------------------------------------ core admin

  private Answer coreAdmin(Params p, long started) throws Exception {
    String action = p.get("action", "STATUS").toUpperCase(Locale.ROOT);
    Map<String, Object> body = new LinkedHashMap<>();
    switch (action) {
      case "STATUS": {
        String only = p.get("core");
        Map<String, Object> status = new LinkedHashMap<>();
        for (String name : new TreeMap<>(cores).keySet()) {
          if (only == null || only.equals(name)) status.put(name, coreStatus(cores.get(name)));
        }
        if (only != null && !cores.containsKey(only)) status.put(only, new LinkedHashMap<>());
        body.put("initFailures", new LinkedHashMap<>());
        body.put("status", status);
        break;
      }
      case "CREATE": {
        String name = p.get("name");
        if (name == null || name.isEmpty()) throw SolrError.bad("Missing required parameter: name");
        if (!name.matches("[A-Za-z0-9._-]+")) throw SolrError.bad("Invalid core name: " + name);
        synchronized (cores) {
          if (cores.containsKey(name)) throw SolrError.bad("Core with name '" + name + "' already exists.");
          Path dir = configSetDir(name, p);
          try {
            Core c = new Core(name, dir, dataDir.resolve(name), timer);
            c.persist();
            cores.put(name, c);
          } catch (SolrError e) {
            throw e;
          } catch (Exception e) {
            throw SolrError.bad("Error CREATEing SolrCore '" + name + "': " + e.getMessage());
          }
        }
        body.put("core", name);
        break;
      }
      case "UNLOAD": {
        String name = p.get("core");
        Core c = name == null ? null : cores.remove(name);
        if (c == null) throw SolrError.bad("Cannot unload non-existent core [" + name + "]");
        c.close();
        Files.deleteIfExists(c.dataDir.resolve("core.properties"));
        if (p.getBool("deleteIndex", false) || p.getBool("deleteDataDir", false) || p.getBool("deleteInstanceDir", false)) {
          Cloud.deleteTree(c.dataDir);
        }
        break;
      }
      case "RELOAD": {
        String name = p.get("core");
        Core c = name == null ? null : cores.get(name);
        if (c == null) throw SolrError.bad("No such core: " + name);
        try {
          c.reload();
        } catch (SolrError e) {
          throw e;
        } catch (Exception e) {
          throw SolrError.bad("Error handling 'RELOAD' action: " + e.getMessage());
        }
        break;
      }
      default:
        throw SolrError.unsupported("the core admin action " + action + " (STATUS, CREATE, UNLOAD and RELOAD only)");
    }
    return new Answer(envelope(body, p, null, started));
  }

  /** configSet=NAME (under --configsets) or a path; instanceDir=DIR holding conf/. */
  private Path configSetDir(String name, Params p) {
    String cs = p.get("configSet"), inst = p.get("instanceDir");
    Path dir;
    if (cs != null) {
      Path asPath = Paths.get(cs);
      if (asPath.isAbsolute()) dir = asPath;
      else if (configSets != null) dir = configSets.resolve(cs);
      else throw SolrError.bad("Error CREATEing SolrCore '" + name + "': configSet " + cs + " not found (start solr-dev with --configsets DIR)");
    } else if (inst != null) {
      dir = Paths.get(inst);
    } else {
      throw SolrError.bad("Error CREATEing SolrCore '" + name + "': give configSet or instanceDir");
    }
    Path conf = Files.isDirectory(dir.resolve("conf")) ? dir.resolve("conf") : dir;
    if (Schema.findFile(conf) == null) {
      throw SolrError.bad("Error CREATEing SolrCore '" + name + "': Could not load configuration from directory " + dir);
    }
    return dir.toAbsolutePath();
  }

  private static Map<String, Object> coreStatus(Core c) throws IOException {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("name", c.name);
    m.put("instanceDir", c.configSetDir.toString());
    m.put("dataDir", c.dataDir.toString() + "/");
    m.put("config", "solrconfig.xml");
    m.put("schema", c.schema.file.getFileName().toString());
    m.put("startTime", c.startTime);
    m.put("uptime", System.currentTimeMillis() - c.startTime.toEpochMilli());
    m.put("index", c.indexStatus());
    return m;
  }

  // ------------------------------------------------------------------ envelopes

  /** The params that echoParams asks for (explicit: what the client sent; all: with defaults). */
  private static Params echoed(Params p) {
    String e = p.get("echoParams", "none");
    if (e.equals("explicit")) return p.explicit();
    if (e.equals("all")) return p;
    return null;
  }

  private static Map<String, Object> envelope(Map<String, Object> body, Params p, Params echo, long started) {
    Map<String, Object> out = new LinkedHashMap<>();
    if (!p.getBool("omitHeader", false)) out.put("responseHeader", header(0, started, echo));
    out.putAll(body);
    return out;
  }

  private static Map<String, Object> header(int status, long started, Params echo) {
    Map<String, Object> h = new LinkedHashMap<>();
    h.put("status", status);
    h.put("QTime", (int) ((System.nanoTime() - started) / 1_000_000));
    if (echo != null) h.put("params", echo.toEcho());
    return h;
  }

  /** Solr's error shape. */
  private static Answer error(int code, String msg, long started, Params echo) {
    Map<String, Object> err = new LinkedHashMap<>();
    err.put("metadata", List.of("error-class", "org.apache.solr.common.SolrException",
        "root-error-class", "org.apache.solr.common.SolrException"));
    err.put("msg", msg);
    err.put("code", code);
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("responseHeader", header(code, started, echo));
    out.put("error", err);
    return new Answer(code, out, null, null);
  }
}
