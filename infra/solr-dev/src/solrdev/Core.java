package solrdev;

import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.apache.lucene.index.IndexReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.SearcherManager;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FSDirectory;

/**
 * One core: its schema, its Lucene index on disk and the two views of it.
 *
 * <p>Searches see the index as of the last commit or soft commit ({@link #searchers}); real-time
 * get sees every change, like Solr's update log: {@link #rtgSearchers} plus {@link #pending}, the
 * documents added or deleted by id since that searcher was last refreshed. A delete-by-query
 * cannot be applied to the pending map, so it refreshes the real-time searcher instead.
 *
 * <p>Every change goes through {@link #lock}; searches do not take it. Soft commits reopen the
 * searchers; hard commits also make the index durable. commitWithin and solrconfig's
 * autoSoftCommit/autoCommit schedule those on a timer.
 */
final class Core {
  /** A change since the last real-time refresh; doc == null means deleted. */
  private static final class Pending {
    final Map<String, List<Object>> doc;

    Pending(Map<String, List<Object>> doc) {
      this.doc = doc;
    }
  }

  final String name;
  final Path configSetDir;
  final Path confDir;
  final Path dataDir;
  /** A SolrCloud collection's core (Collections API), listed by its LIST; false for a standalone core. */
  boolean collection;
  final Instant startTime = Instant.now().truncatedTo(java.time.temporal.ChronoUnit.MILLIS);
  volatile Schema schema;
  volatile SolrConfig config;

  private final Object lock = new Object();
  private final ScheduledExecutorService timer;
  private final Map<String, Pending> pending = new HashMap<>();
  private Directory directory;
  private IndexWriter writer;
  private volatile SearcherManager searchers;
  private SearcherManager rtgSearchers;
  private ScheduledFuture<?> softCommitTask;
  private long softCommitAt;
  private ScheduledFuture<?> hardCommitTask;
  private long lastVersion;

  Core(String name, Path configSetDir, Path dataDir, ScheduledExecutorService timer) throws Exception {
    this.name = name;
    this.configSetDir = configSetDir;
    this.confDir = Files.isDirectory(configSetDir.resolve("conf")) ? configSetDir.resolve("conf") : configSetDir;
    this.dataDir = dataDir;
    this.timer = timer;
    this.schema = Schema.load(confDir);
    this.config = SolrConfig.load(confDir);
    Files.createDirectories(dataDir);
    openIndex();
  }

  private void openIndex() throws IOException {
    directory = FSDirectory.open(dataDir.resolve("index"));
    IndexWriterConfig cfg = new IndexWriterConfig(schema.indexAnalyzer);
    cfg.setOpenMode(IndexWriterConfig.OpenMode.CREATE_OR_APPEND);
    writer = new IndexWriter(directory, cfg);
    searchers = new SearcherManager(writer, true, false, null);
    rtgSearchers = new SearcherManager(writer, true, false, null);
  }

  /** Records this core in its data directory so that a restart finds it again. */
  void persist() throws IOException {
    Properties p = new Properties();
    p.setProperty("name", name);
    p.setProperty("configSet", configSetDir.toAbsolutePath().toString());
    if (collection) p.setProperty("collection", "true");
    try (Writer w = Files.newBufferedWriter(dataDir.resolve("core.properties"), StandardCharsets.UTF_8)) {
      p.store(w, "solr-dev core");
    }
  }

  Object lock() {
    return lock;
  }

  /** Solr's version clock: milliseconds shifted left 20 bits, strictly increasing. */
  long nextVersion() {
    long v = System.currentTimeMillis() << 20;
    lastVersion = v > lastVersion ? v : lastVersion + 1;
    return lastVersion;
  }

  // --------------------------------------------------------------- changes (hold lock)

  void add(Fields.Built doc, boolean overwrite) throws IOException {
    if (overwrite) writer.updateDocument(new Term(schema.uniqueKey, doc.id), doc.doc);
    else writer.addDocument(doc.doc);
    pending.put(doc.id, new Pending(doc.retrievable));
    afterChange();
  }

  void deleteById(String id) throws IOException {
    writer.deleteDocuments(new Term(schema.uniqueKey, id));
    pending.put(id, new Pending(null));
    afterChange();
  }

  void deleteByQuery(Query q) throws IOException {
    writer.deleteDocuments(q);
    rtgSearchers.maybeRefreshBlocking();
    pending.clear();
    afterChange();
  }

  /** solrconfig's autoSoftCommit / autoCommit timers start with the first uncommitted change. */
  private void afterChange() {
    SolrConfig c = config;
    if (c.autoSoftCommitMs > 0) scheduleSoftCommit(c.autoSoftCommitMs);
    if (c.autoCommitMs > 0 && hardCommitTask == null) {
      hardCommitTask = timer.schedule(() -> timed(() -> hardCommit(c.autoCommitOpensSearcher)),
          c.autoCommitMs, TimeUnit.MILLISECONDS);
    }
  }

  /** commitWithin: a soft commit no later than ms from now (an earlier one already planned stays). */
  void scheduleSoftCommit(long ms) {
    long at = System.currentTimeMillis() + ms;
    if (softCommitTask != null && softCommitAt <= at) return;
    if (softCommitTask != null) softCommitTask.cancel(false);
    softCommitAt = at;
    softCommitTask = timer.schedule(() -> timed(this::softCommit), ms, TimeUnit.MILLISECONDS);
  }

  private interface IoAction {
    void run() throws IOException;
  }

  private void timed(IoAction action) {
    synchronized (lock) {
      try {
        action.run();
      } catch (IOException | RuntimeException e) {
        System.err.println("solr-dev: scheduled commit of core " + name + " failed: " + e);
      }
    }
  }

  void softCommit() throws IOException {
    if (softCommitTask != null) {
      softCommitTask.cancel(false);
      softCommitTask = null;
    }
    searchers.maybeRefreshBlocking();
    rtgSearchers.maybeRefreshBlocking();
    pending.clear();
  }

  void hardCommit(boolean openSearcher) throws IOException {
    if (hardCommitTask != null) {
      hardCommitTask.cancel(false);
      hardCommitTask = null;
    }
    writer.commit();
    if (openSearcher) softCommit();
  }

  void optimize(int maxSegments, boolean openSearcher) throws IOException {
    writer.forceMerge(Math.max(1, maxSegments));
    hardCommit(openSearcher);
  }

  void expungeDeletes() throws IOException {
    writer.forceMergeDeletes();
  }

  /** Discards everything since the last hard commit, soft-committed changes included, as Solr does. */
  void rollback() throws IOException {
    cancelTimers();
    searchers.close();
    rtgSearchers.close();
    writer.rollback();
    directory.close();
    pending.clear();
    openIndex();
  }

  private void cancelTimers() {
    if (softCommitTask != null) softCommitTask.cancel(false);
    if (hardCommitTask != null) hardCommitTask.cancel(false);
    softCommitTask = null;
    hardCommitTask = null;
  }

  // --------------------------------------------------------------- reads

  /** The latest version of a document, committed or not (hold lock): real-time get. */
  Map<String, List<Object>> realTimeGet(String id) throws IOException {
    Pending p = pending.get(id);
    if (p != null) return p.doc;
    IndexSearcher s = rtgSearchers.acquire();
    try {
      TopDocs hits = s.search(new TermQuery(new Term(schema.uniqueKey, id)), 1);
      if (hits.scoreDocs.length == 0) return null;
      int doc = hits.scoreDocs[0].doc;
      List<LeafReaderContext> leaves = s.getIndexReader().leaves();
      LeafReaderContext leaf = leaves.get(org.apache.lucene.index.ReaderUtil.subIndex(doc, leaves));
      return Fields.read(schema, leaf.reader(), doc - leaf.docBase);
    } finally {
      rtgSearchers.release(s);
    }
  }

  /** A searcher on the last (soft) committed state; release it with {@link #release}. */
  IndexSearcher acquire() throws IOException {
    return searchers.acquire();
  }

  void release(IndexSearcher s) throws IOException {
    searchers.release(s);
  }

  /** Index figures for the core admin STATUS action. */
  Map<String, Object> indexStatus() throws IOException {
    IndexSearcher s = acquire();
    try {
      IndexReader r = s.getIndexReader();
      Map<String, Object> m = new java.util.LinkedHashMap<>();
      m.put("numDocs", r.numDocs());
      m.put("maxDoc", r.maxDoc());
      m.put("deletedDocs", r.maxDoc() - r.numDocs());
      m.put("version", ((org.apache.lucene.index.DirectoryReader) r).getVersion());
      m.put("segmentCount", r.leaves().size());
      m.put("current", ((org.apache.lucene.index.DirectoryReader) r).isCurrent());
      m.put("hasDeletions", r.hasDeletions());
      m.put("directory", directory.toString());
      long size = 0;
      for (String f : directory.listAll()) {
        try {
          size += directory.fileLength(f);
        } catch (IOException ignored) {
          // a file merged away while listing
        }
      }
      m.put("sizeInBytes", size);
      m.put("size", size + " bytes");
      return m;
    } finally {
      release(s);
    }
  }

  /**
   * Reloads the schema and solrconfig.xml from the configset, keeping the index (core RELOAD).
   * Changes are committed first so that nothing pending is lost.
   */
  void reload() throws Exception {
    synchronized (lock) {
      Schema s = Schema.load(confDir);
      SolrConfig c = SolrConfig.load(confDir);
      close();
      schema = s;
      config = c;
      openIndex();
    }
  }

  /**
   * Closes the index, committing pending changes first: Solr's default commitOnClose, which is
   * what a clean shutdown (SIGTERM), RELOAD and UNLOAD do.
   */
  void close() throws IOException {
    synchronized (lock) {
      cancelTimers();
      writer.commit();
      searchers.close();
      rtgSearchers.close();
      writer.close();
      directory.close();
      pending.clear();
    }
  }
}
