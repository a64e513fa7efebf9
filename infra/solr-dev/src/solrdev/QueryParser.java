package solrdev;

import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanClause.Occur;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.BoostQuery;
import org.apache.lucene.search.ConstantScoreQuery;
import org.apache.lucene.search.FuzzyQuery;
import org.apache.lucene.search.MatchAllDocsQuery;
import org.apache.lucene.search.MatchNoDocsQuery;
import org.apache.lucene.search.MultiPhraseQuery;
import org.apache.lucene.search.PhraseQuery;
import org.apache.lucene.search.PrefixQuery;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.RegexpQuery;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.WildcardQuery;
import org.apache.lucene.util.QueryBuilder;
import solrdev.Schema.Kind;

/**
 * Solr's standard ("lucene") query parser: a hand port of Solr 9's QueryParser.jj grammar and
 * SolrQueryParserBase, because Lucene 8's classic parser differs from Solr's in ways a client
 * sees (split-on-whitespace off by default, field:* as an existence query, raw terms on string
 * fields, leading wildcards allowed, ^= constant-score boosts). Queries are built schema-aware:
 * text fields through their query analyzer, other fields through {@link Fields}.
 */
final class QueryParser extends QueryBuilder {
  private enum K {
    AND, OR, NOT, PLUS, MINUS, BAREOPER, LPAREN, RPAREN, COLON, STAR, CARAT, QUOTED, TERM,
    FUZZY_SLOP, PREFIXTERM, WILDTERM, REGEXPTERM, RANGEIN_START, RANGEEX_START, LPARAMS, FILTER,
    NUMBER, RANGE_TO, RANGEIN_END, RANGEEX_END, RANGE_QUOTED, RANGE_GOOP, EOF
  }

  private static final class Tok {
    final K kind;
    final String image;
    final int start;

    Tok(K kind, String image, int start) {
      this.kind = kind;
      this.image = image;
      this.start = start;
    }
  }

  private static final int CONJ_NONE = 0, CONJ_AND = 1, CONJ_OR = 2;
  private static final int MOD_NONE = 0, MOD_NOT = 10, MOD_REQ = 11;
  private static final Set<K> NOT_AFTER_MULTITERM = EnumSet.of(K.COLON, K.STAR, K.FUZZY_SLOP, K.CARAT, K.AND, K.OR);
  private static final Set<K> CLAUSE_START = EnumSet.of(K.TERM, K.STAR, K.PREFIXTERM, K.WILDTERM,
      K.REGEXPTERM, K.NUMBER, K.BAREOPER, K.RANGEIN_START, K.RANGEEX_START, K.QUOTED, K.LPAREN,
      K.FILTER, K.LPARAMS, K.AND, K.OR, K.PLUS, K.MINUS, K.NOT);

  private final Schema schema;
  private final String defaultField;
  private final boolean andOperator;
  private final boolean splitOnWhitespace;
  private final Instant now;
  private String input;
  private List<Tok> toks;
  private int pos;

  QueryParser(Schema schema, String defaultField, String qop, boolean splitOnWhitespace, Instant now) {
    super(schema.queryAnalyzer);
    if (defaultField != null && defaultField.isEmpty()) throw SolrError.bad("default field name is empty");
    this.schema = schema;
    this.defaultField = defaultField;
    if (qop != null && !qop.equals("AND") && !qop.equals("OR")) {
      throw SolrError.bad("Invalid value for q.op parameter: " + qop + ". Valid values are 'AND' or 'OR'");
    }
    this.andOperator = "AND".equals(qop);
    this.splitOnWhitespace = splitOnWhitespace;
    this.now = now;
  }

  /** Parses a whole query string; an empty result matches nothing, as in Solr. */
  Query parse(String query) {
    input = query;
    pos = 0;
    try {
      toks = lex(query);
      Query q = query(null);
      if (peek().kind != K.EOF) throw encountered(peek());
      return q != null ? q : new BooleanQuery.Builder().build();
    } catch (BooleanQuery.TooManyClauses e) {
      throw syntax("too many boolean clauses");
    } catch (IllegalArgumentException e) {
      throw SolrError.bad(e.getMessage());
    }
  }

  // ------------------------------------------------------------------ lexer

  private SolrError syntax(String detail) {
    return SolrError.bad("org.apache.solr.search.SyntaxError: Cannot parse '" + input + "': " + detail);
  }

  private SolrError encountered(Tok t) {
    // JavaCC's ParseException wording, which Solr passes on
    String what = t.kind == K.EOF ? "\"<EOF>\"" : "\" <" + t.kind + "> \"" + t.image + " \"\"";
    return syntax("Encountered " + what + " at line 1, column " + Math.max(t.start, 1) + ".");
  }

  private static boolean isWs(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\u3000';
  }

  private static boolean special(char c) {
    return isWs(c) || "+-!():^[]\"{}~*?\\/".indexOf(c) >= 0;
  }

  private static int termStart(String s, int i) {
    if (i >= s.length()) return 0;
    char c = s.charAt(i);
    if (c == '\\') return i + 1 < s.length() ? 2 : 0;
    return special(c) ? 0 : 1;
  }

  private static int termChar(String s, int i) {
    int n = termStart(s, i);
    if (n > 0) return n;
    return i < s.length() && "-+/!".indexOf(s.charAt(i)) >= 0 ? 1 : 0;
  }

  private static int termLength(String s, int i) {
    int a = termStart(s, i);
    if (a == 0) return 0;
    int j = i + a;
    for (int b; (b = termChar(s, j)) > 0; ) j += b;
    return j - i;
  }

  private static int digits(String s, int i) {
    int j = i;
    while (j < s.length() && Character.isDigit(s.charAt(j)) && s.charAt(j) < 128) j++;
    return j - i;
  }

  /** Longest match over the DEFAULT-state tokens; ties go to the earlier declaration. */
  private List<Tok> lex(String s) {
    List<Tok> out = new ArrayList<>();
    int i = 0, n = s.length();
    String state = "DEFAULT";
    while (true) {
      if (!state.equals("BOOST")) {
        while (true) {
          while (i < n && isWs(s.charAt(i))) i++;
          if (state.equals("DEFAULT") && s.startsWith("/*", i)) i = skipComment(s, i);
          else break;
        }
      }
      if (i >= n) {
        out.add(new Tok(K.EOF, "", n));
        return out;
      }
      K best = null;
      int len = 0;
      if (state.equals("BOOST")) {
        int j = i;
        if (s.charAt(j) == '=') j++;
        if (j < n && s.charAt(j) == '-') j++;
        int d = digits(s, j);
        if (d > 0) {
          j += d;
          if (j < n && s.charAt(j) == '.' && digits(s, j + 1) > 0) j += 1 + digits(s, j + 1);
          best = K.NUMBER;
          len = j - i;
        }
        state = "DEFAULT";
      } else if (state.equals("RANGE")) {
        char c = s.charAt(i);
        int goop = 0;
        while (i + goop < n && " ]}".indexOf(s.charAt(i + goop)) < 0) goop++;
        int quoted = 0;
        if (c == '"') {
          int j = i + 1;
          while (j < n) {
            if (s.charAt(j) == '\\' && j + 1 < n && s.charAt(j + 1) == '"') j += 2;
            else if (s.charAt(j) != '"') j++;
            else break;
          }
          if (j < n && j > i + 1) quoted = j + 1 - i;
        }
        if (s.startsWith("TO", i) && goop <= 2) { best = K.RANGE_TO; len = 2; }
        else if (c == ']') { best = K.RANGEIN_END; len = 1; state = "DEFAULT"; }
        else if (c == '}') { best = K.RANGEEX_END; len = 1; state = "DEFAULT"; }
        else if (quoted >= goop && quoted > 0) { best = K.RANGE_QUOTED; len = quoted; }
        else if (goop > 0) { best = K.RANGE_GOOP; len = goop; }
      } else {
        int[] lens = new int[K.values().length];
        char c = s.charAt(i);
        lens[K.AND.ordinal()] = s.startsWith("AND", i) ? 3 : s.startsWith("&&", i) ? 2 : 0;
        lens[K.OR.ordinal()] = s.startsWith("OR", i) || s.startsWith("||", i) ? 2 : 0;
        lens[K.NOT.ordinal()] = s.startsWith("NOT", i) ? 3 : c == '!' ? 1 : 0;
        lens[K.PLUS.ordinal()] = c == '+' ? 1 : 0;
        lens[K.MINUS.ordinal()] = c == '-' ? 1 : 0;
        lens[K.BAREOPER.ordinal()] = "+-!".indexOf(c) >= 0 && i + 1 < n && isWs(s.charAt(i + 1)) ? 2 : 0;
        lens[K.LPAREN.ordinal()] = c == '(' ? 1 : 0;
        lens[K.RPAREN.ordinal()] = c == ')' ? 1 : 0;
        lens[K.COLON.ordinal()] = c == ':' ? 1 : 0;
        lens[K.STAR.ordinal()] = c == '*' ? 1 : 0;
        lens[K.CARAT.ordinal()] = c == '^' ? 1 : 0;
        lens[K.QUOTED.ordinal()] = quotedLength(s, i);
        int term = termLength(s, i);
        lens[K.TERM.ordinal()] = term;
        if (c == '~') {
          int j = i + 1, d = digits(s, j);
          if (d > 0) {
            j += d;
            if (j < n && s.charAt(j) == '.' && digits(s, j + 1) > 0) j += 1 + digits(s, j + 1);
          }
          lens[K.FUZZY_SLOP.ordinal()] = j - i;
        }
        int prefix = c == '*' ? 1 : 0;
        if (term > 0 && i + term < n && s.charAt(i + term) == '*') prefix = Math.max(prefix, term + 1);
        lens[K.PREFIXTERM.ordinal()] = prefix;
        lens[K.WILDTERM.ordinal()] = wildLength(s, i);
        lens[K.REGEXPTERM.ordinal()] = regexpLength(s, i);
        lens[K.RANGEIN_START.ordinal()] = c == '[' ? 1 : 0;
        lens[K.RANGEEX_START.ordinal()] = c == '{' ? 1 : 0;
        lens[K.LPARAMS.ordinal()] = localParamsLength(s, i);
        lens[K.FILTER.ordinal()] = s.startsWith("filter(", i) ? 7 : 0;
        for (K k : K.values()) {
          if (lens[k.ordinal()] > len) {
            len = lens[k.ordinal()];
            best = k;
          }
        }
        if (best == K.CARAT) state = "BOOST";
        if (best == K.RANGEIN_START || best == K.RANGEEX_START) state = "RANGE";
      }
      if (best == null) {
        throw syntax("Lexical error at line 1, column " + (i + 1) + ".  Encountered: \"" + s.charAt(i) + "\"");
      }
      out.add(new Tok(best, s.substring(i, i + len), i + 1));
      i += len;
    }
  }

  private int skipComment(String s, int i) {
    int depth = 0, n = s.length();
    while (i < n) {
      if (s.startsWith("/*", i)) { depth++; i += 2; }
      else if (s.startsWith("*/", i)) { depth--; i += 2; if (depth == 0) return i; }
      else i++;
    }
    return n;
  }

  /** {!…} and the value glued to it; only recognised, to answer that it is not supported. */
  private static int localParamsLength(String s, int i) {
    if (!s.startsWith("{!", i)) return 0;
    int close = s.indexOf('}', i);
    if (close < 0) return s.length() - i;
    int j = close + 1;
    while (j < s.length() && ") \t\n{^".indexOf(s.charAt(j)) < 0) j++;
    return j - i;
  }

  private static int quotedLength(String s, int i) {
    if (s.charAt(i) != '"') return 0;
    int j = i + 1;
    while (j < s.length()) {
      char c = s.charAt(j);
      if (c == '\\') j += 2;
      else if (c == '"') return j + 1 - i;
      else j++;
    }
    return 0;
  }

  private static int wildLength(String s, int i) {
    int j = i, a = termStart(s, i);
    if (a > 0) j += a;
    else if (i < s.length() && (s.charAt(i) == '*' || s.charAt(i) == '?')) j++;
    else return 0;
    while (true) {
      int b = termChar(s, j);
      if (b > 0) j += b;
      else if (j < s.length() && (s.charAt(j) == '*' || s.charAt(j) == '?')) j++;
      else return j - i;
    }
  }

  private static int regexpLength(String s, int i) {
    int n = s.length();
    if (s.charAt(i) != '/' || i + 1 >= n) return 0;
    int j = i + 1;
    if (s.startsWith("\\/", j)) j += 2;
    else if (s.charAt(j) != '*' && s.charAt(j) != '/') j++;
    else return 0;
    while (j < n) {
      if (s.startsWith("\\/", j)) j += 2;
      else if (s.charAt(j) != '/') j++;
      else return j + 1 - i;
    }
    return 0;
  }

  // ------------------------------------------------------------------ grammar

  private Tok peek() {
    return toks.get(pos);
  }

  private Tok peek(int ahead) {
    return toks.get(Math.min(pos + ahead, toks.size() - 1));
  }

  private Tok next() {
    return toks.get(pos++);
  }

  private Tok expect(K... kinds) {
    Tok t = peek();
    for (K k : kinds) if (t.kind == k) return next();
    throw encountered(t);
  }

  private boolean multiTermAhead(int at) {
    return peek(at).kind == K.TERM && peek(at + 1).kind == K.TERM
        && !NOT_AFTER_MULTITERM.contains(peek(at + 2).kind);
  }

  private Query query(String field) {
    List<BooleanClause> clauses = new ArrayList<>();
    if (multiTermAhead(0)) {
      multiTerm(field, clauses);
    } else {
      int mods = modifiers();
      addClause(clauses, CONJ_NONE, mods, clause(field));
    }
    while (true) {
      if (multiTermAhead(0)) {
        multiTerm(field, clauses);
      } else if (CLAUSE_START.contains(peek().kind)) {
        int conj = conjunction();
        int mods = modifiers();
        addClause(clauses, conj, mods, clause(field));
      } else {
        break;
      }
    }
    if (clauses.size() == 1 && clauses.get(0).getOccur() == Occur.SHOULD) return clauses.get(0).getQuery();
    return booleanQuery(clauses);
  }

  private int conjunction() {
    if (peek().kind == K.AND) { next(); return CONJ_AND; }
    if (peek().kind == K.OR) { next(); return CONJ_OR; }
    return CONJ_NONE;
  }

  private int modifiers() {
    K k = peek().kind;
    if (k == K.PLUS) { next(); return MOD_REQ; }
    if (k == K.MINUS || k == K.NOT) { next(); return MOD_NOT; }
    return MOD_NONE;
  }

  private Query clause(String field) {
    if ((peek().kind == K.TERM || peek().kind == K.STAR) && peek(1).kind == K.COLON) {
      Tok f = next();
      next();
      field = f.kind == K.STAR ? "*" : unescape(f.image);
    }
    Tok t = peek();
    Query q;
    Tok boost = null;
    if (t.kind == K.LPAREN) {
      next();
      q = query(field);
      expect(K.RPAREN);
      boost = optionalBoost();
    } else if (t.kind == K.FILTER) {
      throw SolrError.unsupported("filter(...) in queries");
    } else if (t.kind == K.LPARAMS) {
      throw SolrError.unsupported("local params ({!...}) in queries");
    } else {
      q = term(field);
    }
    return boost(q, boost);
  }

  private Tok optionalBoost() {
    if (peek().kind != K.CARAT) return null;
    next();
    return expect(K.NUMBER);
  }

  /** A term's `^boost` and `~slop`, in either order (the grammar allows both): {boost, fuzzy}, each may be null. */
  private Tok[] boostAndFuzzy() {
    Tok boost = null, fuzzy = null;
    if (peek().kind == K.CARAT) {
      boost = optionalBoost();
      if (peek().kind == K.FUZZY_SLOP) fuzzy = next();
    } else if (peek().kind == K.FUZZY_SLOP) {
      fuzzy = next();
      boost = optionalBoost();
    }
    return new Tok[] {boost, fuzzy};
  }

  private Query term(String field) {
    Tok t = peek();
    boolean explicit = field != null && !field.isEmpty();
    String f = explicit ? field : defaultField;
    switch (t.kind) {
      case TERM: case STAR: case PREFIXTERM: case WILDTERM: case REGEXPTERM: case NUMBER: case BAREOPER: {
        next();
        Tok[] modifiers = boostAndFuzzy();
        Tok boost = modifiers[0], fuzzy = modifiers[1];
        String image = t.kind == K.BAREOPER ? t.image.substring(0, 1) : t.image;
        return boost(bareToken(f, explicit, t.kind, image, fuzzy), boost);
      }
      case RANGEIN_START: case RANGEEX_START: {
        next();
        boolean startInc = t.kind == K.RANGEIN_START;
        Tok g1 = expect(K.RANGE_GOOP, K.RANGE_QUOTED, K.RANGE_TO);
        expect(K.RANGE_TO);
        Tok g2 = expect(K.RANGE_GOOP, K.RANGE_QUOTED, K.RANGE_TO);
        boolean endInc = expect(K.RANGEIN_END, K.RANGEEX_END).kind == K.RANGEIN_END;
        Tok boost = optionalBoost();
        String lo = rangeEnd(g1), hi = rangeEnd(g2);
        return boost(Fields.rangeQuery(schema.fieldOrThrow(checkField(f)), lo, hi, startInc, endInc, now), boost);
      }
      case QUOTED: {
        next();
        Tok[] modifiers = boostAndFuzzy();
        Tok boost = modifiers[0], fuzzy = modifiers[1];
        int slop = 0;
        if (fuzzy != null) {
          try {
            slop = (int) Float.parseFloat(fuzzy.image.substring(1));
          } catch (NumberFormatException ignored) {
            // "~" without a number keeps the default slop, as in Solr
          }
        }
        String text = unescape(t.image.substring(1, t.image.length() - 1));
        return boost(withSlop(fieldQuery(checkField(f), text, true), slop), boost);
      }
      default:
        throw encountered(t);
    }
  }

  private String rangeEnd(Tok g) {
    if (g.kind == K.RANGE_QUOTED) return unescape(g.image.substring(1, g.image.length() - 1));
    return g.image.equals("*") ? null : unescape(g.image);
  }

  private String checkField(String f) {
    if (f == null) throw SolrError.bad("no field name specified in query and no default specified via 'df' param");
    return f;
  }

  private Query bareToken(String field, boolean explicit, K kind, String image, Tok fuzzySlop) {
    checkField(field);
    if (kind == K.STAR || kind == K.WILDTERM) return wildcard(field, explicit, image);
    if (kind == K.PREFIXTERM) return prefix(field, unescape(image.substring(0, image.length() - 1)));
    if (kind == K.REGEXPTERM) return regexp(field, image.substring(1, image.length() - 1));
    if (fuzzySlop != null) {
      float fms = FuzzyQuery.defaultMaxEdits;
      try {
        fms = Float.parseFloat(fuzzySlop.image.substring(1));
      } catch (NumberFormatException ignored) {
        // "~" alone: default edit distance
      }
      if (fms < 0f) throw syntax("Minimum similarity for a FuzzyQuery has to be between 0.0f and 1.0f !");
      if (fms >= 1f && fms != (int) fms) throw syntax("Fractional edit distances are not allowed!");
      return fuzzy(field, unescape(image), fms);
    }
    return fieldQuery(field, unescape(image), false);
  }

  /** A term, phrase or analysed text on one field (SolrQueryParserBase.getFieldQuery). */
  private Query fieldQuery(String field, String text, boolean quoted) {
    Schema.Field sf = schema.fieldOrThrow(field);
    if (sf.kind() == Kind.TEXT && sf.indexed()) {
      boolean autoPhrase = sf.type.autoGeneratePhraseQueries;
      setAutoGenerateMultiTermSynonymsPhraseQuery(autoPhrase);
      setEnableGraphQueries(sf.type.enableGraphQueries);
      boolean asQuoted = splitOnWhitespace ? (quoted || autoPhrase) : quoted;
      return createFieldQuery(sf.type.query, andOperator ? Occur.MUST : Occur.SHOULD, field, text, asQuoted, 0);
    }
    if (sf.kind() == Kind.TEXT) return new TermQuery(new Term(field, text)); // not indexed: matches nothing, as in Solr
    return Fields.termQuery(sf, text, now);
  }

  private static Query withSlop(Query q, int slop) {
    if (q instanceof PhraseQuery) {
      PhraseQuery pq = (PhraseQuery) q;
      PhraseQuery.Builder b = new PhraseQuery.Builder();
      Term[] terms = pq.getTerms();
      int[] positions = pq.getPositions();
      for (int i = 0; i < terms.length; i++) b.add(terms[i], positions[i]);
      b.setSlop(slop);
      return b.build();
    }
    if (q instanceof MultiPhraseQuery && ((MultiPhraseQuery) q).getSlop() != slop) {
      return new MultiPhraseQuery.Builder((MultiPhraseQuery) q).setSlop(slop).build();
    }
    return q;
  }

  /**
   * Consecutive bare terms (Solr's MultiTerm rule). With sow=false, as Solr 9 defaults, a text
   * field analyses them together; other fields get one term query each, OR-ed as Solr's raw
   * queries are (even under q.op=AND).
   */
  private void multiTerm(String field, List<BooleanClause> clauses) {
    boolean explicit = field != null && !field.isEmpty();
    String f = checkField(explicit ? field : defaultField);
    List<String> terms = new ArrayList<>();
    terms.add(unescape(next().image));
    do {
      terms.add(unescape(next().image));
    } while (peek().kind == K.TERM && !NOT_AFTER_MULTITERM.contains(peek(1).kind));
    if (splitOnWhitespace) {
      for (String t : terms) addClause(clauses, CONJ_NONE, MOD_NONE, fieldQuery(f, t, false));
      return;
    }
    Schema.Field sf = schema.fieldOrThrow(f);
    if (sf.kind() == Kind.TEXT) {
      Query q = fieldQuery(f, String.join(" ", terms), false);
      if (q != null) clauses.add(new BooleanClause(q, andOperator ? Occur.MUST : Occur.SHOULD));
      return;
    }
    if (!andOperator) {
      for (String t : terms) clauses.add(new BooleanClause(Fields.termQuery(sf, t, now), Occur.SHOULD));
      return;
    }
    BooleanQuery.Builder any = new BooleanQuery.Builder();
    for (String t : terms) any.add(Fields.termQuery(sf, t, now), Occur.SHOULD);
    clauses.add(new BooleanClause(any.build(), Occur.MUST));
  }

  /** SolrQueryParserBase.addClause, verbatim in behaviour. */
  private void addClause(List<BooleanClause> clauses, int conj, int mods, Query q) {
    if (!clauses.isEmpty() && conj == CONJ_AND) {
      BooleanClause c = clauses.get(clauses.size() - 1);
      if (!c.isProhibited()) clauses.set(clauses.size() - 1, new BooleanClause(c.getQuery(), Occur.MUST));
    }
    if (!clauses.isEmpty() && andOperator && conj == CONJ_OR) {
      BooleanClause c = clauses.get(clauses.size() - 1);
      if (!c.isProhibited()) clauses.set(clauses.size() - 1, new BooleanClause(c.getQuery(), Occur.SHOULD));
    }
    if (q == null) return;
    boolean required, prohibited;
    if (!andOperator) {
      prohibited = mods == MOD_NOT;
      required = mods == MOD_REQ;
      if (conj == CONJ_AND && !prohibited) required = true;
    } else {
      prohibited = mods == MOD_NOT;
      required = !prohibited && conj != CONJ_OR;
    }
    if (required && !prohibited) clauses.add(new BooleanClause(q, Occur.MUST));
    else if (!required && !prohibited) clauses.add(new BooleanClause(q, Occur.SHOULD));
    else clauses.add(new BooleanClause(q, Occur.MUST_NOT));
  }

  private static Query booleanQuery(List<BooleanClause> clauses) {
    if (clauses.isEmpty()) return null;
    BooleanQuery.Builder b = new BooleanQuery.Builder();
    for (BooleanClause c : clauses) b.add(c);
    BooleanQuery bq = b.build();
    if (bq.clauses().size() == 1 && bq.clauses().get(0).getOccur() == Occur.SHOULD) {
      return bq.clauses().get(0).getQuery();
    }
    return bq;
  }

  private Query boost(Query q, Tok boost) {
    if (boost == null || q == null) return q;
    if (boost.image.startsWith("=")) {
      Query inner = q instanceof ConstantScoreQuery ? q : new ConstantScoreQuery(q);
      return new BoostQuery(inner, Float.parseFloat(boost.image.substring(1)));
    }
    return new BoostQuery(q, Float.parseFloat(boost.image));
  }

  private Query wildcard(String field, boolean explicit, String termStr) {
    if (termStr.equals("*")) {
      if (field.equals("*") || !explicit) return new MatchAllDocsQuery();
      return Fields.existenceQuery(schema.fieldOrThrow(field));
    }
    Schema.Field sf = schema.fieldOrThrow(field);
    if (sf.kind().isPoint()) return new MatchNoDocsQuery();
    requireIndexed(sf, "wildcard");
    String t = sf.kind() == Kind.TEXT ? Analysis.multiTerm(sf.type, field, termStr) : termStr;
    return new WildcardQuery(new Term(field, t));
  }

  private Query prefix(String field, String text) {
    Schema.Field sf = schema.fieldOrThrow(field);
    if (sf.kind().isPoint()) throw SolrError.bad("Can't run prefix queries on numeric fields");
    requireIndexed(sf, "prefix");
    String t = sf.kind() == Kind.TEXT ? Analysis.multiTerm(sf.type, field, text) : text;
    return new PrefixQuery(new Term(field, t));
  }

  private Query regexp(String field, String text) {
    Schema.Field sf = schema.fieldOrThrow(field);
    if (sf.kind().isPoint()) return new MatchNoDocsQuery();
    requireIndexed(sf, "regexp");
    String t = sf.kind() == Kind.TEXT ? Analysis.multiTerm(sf.type, field, text) : text;
    return new RegexpQuery(new Term(field, t));
  }

  // floatToEdits is deprecated in Lucene 8 but is exactly what Solr 9 calls.
  @SuppressWarnings("deprecation")
  private Query fuzzy(String field, String text, float minSim) {
    Schema.Field sf = schema.fieldOrThrow(field);
    if (sf.kind().isPoint()) return new MatchNoDocsQuery();
    requireIndexed(sf, "fuzzy");
    String t = sf.kind() == Kind.TEXT ? Analysis.multiTerm(sf.type, field, text) : text;
    int edits = FuzzyQuery.floatToEdits(minSim, t.codePointCount(0, t.length()));
    return new FuzzyQuery(new Term(field, t), edits, 0);
  }

  /** Solr answers these on a docValues-only field from the docValues; solr-dev cannot. */
  private static void requireIndexed(Schema.Field sf, String what) {
    if (!sf.indexed() && sf.docValues()) {
      throw SolrError.unsupported(what + " queries on field " + sf.name + ", which has docValues but is not indexed");
    }
  }

  /** SolrQueryParserBase.discardEscapeChar, including \\uXXXX escapes. */
  private String unescape(String in) {
    int start = in.indexOf('\\');
    if (start < 0) return in;
    StringBuilder out = new StringBuilder(in.length());
    out.append(in, 0, start);
    boolean escaped = false;
    for (int i = start; i < in.length(); i++) {
      char c = in.charAt(i);
      if (escaped) {
        if (c == 'u') {
          if (i + 4 >= in.length()) throw syntax("Truncated unicode escape sequence.");
          try {
            out.append((char) Integer.parseInt(in.substring(i + 1, i + 5), 16));
          } catch (NumberFormatException e) {
            throw syntax("Non-hex character in Unicode escape sequence: " + in.substring(i + 1, i + 5));
          }
          i += 4;
        } else {
          out.append(c);
        }
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else {
        out.append(c);
      }
    }
    if (escaped) throw syntax("Term can not end with escape character.");
    return out.toString();
  }
}
