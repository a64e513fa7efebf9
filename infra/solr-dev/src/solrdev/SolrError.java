package solrdev;

/** An error with an HTTP status, answered in Solr's error shape. */
final class SolrError extends RuntimeException {
  final int code;

  SolrError(int code, String msg) {
    super(msg);
    this.code = code;
  }

  static SolrError bad(String msg) {
    return new SolrError(400, msg);
  }

  /** For features Solr has but this server does not: always 400, and the message says so. */
  static SolrError unsupported(String what) {
    return new SolrError(400, "solr-dev does not support " + what);
  }
}
