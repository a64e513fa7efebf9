package solrdev;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.custom.CustomAnalyzer;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.apache.lucene.analysis.util.CharFilterFactory;
import org.apache.lucene.analysis.util.TokenFilterFactory;
import org.apache.lucene.analysis.util.TokenizerFactory;
import org.w3c.dom.Element;

/**
 * Maps a Solr TextField's {@code <analyzer>} chains onto Lucene's analysis factories. Solr's
 * factory classes are Lucene's (solr.LowerCaseFilterFactory is Lucene's LowerCaseFilterFactory),
 * so a chain is rebuilt with CustomAnalyzer, looking factories up by their SPI name; resource
 * files (stopwords.txt, synonyms.txt) are read from the configset's conf directory.
 */
final class Analysis {
  private Analysis() {}

  /** The analyzers of one TextField type. multiTerm is null unless declared explicitly. */
  static final class Chain {
    final Analyzer index;
    final Analyzer query;
    final Analyzer multiTerm;

    Chain(Analyzer index, Analyzer query, Analyzer multiTerm) {
      this.index = index;
      this.query = query;
      this.multiTerm = multiTerm;
    }
  }

  /** Builds the chains of a fieldType element; throws IllegalArgumentException saying why not. */
  static Chain build(Element fieldType, Path confDir, Integer positionIncrementGap) {
    Analyzer index = null, query = null, multi = null;
    for (Element a : Xml.children(fieldType, "analyzer")) {
      String type = Xml.attr(a, "type");
      Analyzer built = analyzer(a, confDir, positionIncrementGap);
      if (type == null || type.equals("index")) index = built;
      else if (type.equals("query")) query = built;
      else if (type.equals("multiterm")) multi = built;
      else throw new IllegalArgumentException("unknown analyzer type '" + type + "'");
    }
    // Solr: a missing index or query chain falls back to the other one.
    if (index == null) index = query;
    if (query == null) query = index;
    if (index == null) throw new IllegalArgumentException("a TextField needs an <analyzer>");
    return new Chain(index, query, multi);
  }

  private static Analyzer analyzer(Element a, Path confDir, Integer gap) {
    String cls = Xml.attr(a, "class");
    if (cls != null) {
      if (gap != null) {
        throw new IllegalArgumentException("Can't set positionIncrementGap on custom analyzer " + cls);
      }
      try {
        return (Analyzer) Class.forName(cls).getDeclaredConstructor().newInstance();
      } catch (ReflectiveOperationException | ClassCastException e) {
        throw new IllegalArgumentException("analyzer class " + cls + " is not available in Lucene 8");
      }
    }
    try {
      CustomAnalyzer.Builder b = CustomAnalyzer.builder(confDir);
      boolean tokenizer = false;
      for (Element c : Xml.children(a)) {
        Map<String, String> params = params(c);
        switch (c.getTagName()) {
          case "charFilter":
            if (isClassName(c)) b.addCharFilter(factoryClass(c, CharFilterFactory.class), params);
            else b.addCharFilter(spiName(c, "CharFilterFactory"), params);
            break;
          case "tokenizer":
            if (isClassName(c)) b.withTokenizer(factoryClass(c, TokenizerFactory.class), params);
            else b.withTokenizer(spiName(c, "TokenizerFactory"), params);
            tokenizer = true;
            break;
          case "filter":
            if (isClassName(c)) b.addTokenFilter(factoryClass(c, TokenFilterFactory.class), params);
            else b.addTokenFilter(spiName(c, "FilterFactory"), params);
            break;
          default:
            throw new IllegalArgumentException("unexpected <" + c.getTagName() + "> in <analyzer>");
        }
      }
      if (!tokenizer) throw new IllegalArgumentException("an <analyzer> needs a <tokenizer>");
      if (gap != null) b.withPositionIncrementGap(gap);
      return b.build();
    } catch (IOException e) {
      throw new IllegalArgumentException("cannot read an analysis resource: " + e.getMessage());
    }
  }

  /** Factory arguments are the element's attributes, less the ones that name the factory. */
  private static Map<String, String> params(Element c) {
    Map<String, String> p = new HashMap<>(Xml.attributes(c));
    p.remove("class");
    p.remove("name");
    // Solr 9 configsets say luceneMatchVersion=9.x, which Lucene 8 factories cannot honour.
    p.remove("luceneMatchVersion");
    return p;
  }

  private static boolean isClassName(Element c) {
    String cls = Xml.attr(c, "class");
    return cls != null && !cls.startsWith("solr.");
  }

  private static <T> Class<? extends T> factoryClass(Element c, Class<T> kind) {
    String cls = Xml.attr(c, "class");
    try {
      return Class.forName(cls).asSubclass(kind);
    } catch (ClassNotFoundException | ClassCastException e) {
      throw new IllegalArgumentException("analysis factory " + cls + " is not available in Lucene 8");
    }
  }

  /** "solr.ASCIIFoldingFilterFactory" and name="asciiFolding" both give Lucene's SPI name. */
  private static String spiName(Element c, String suffix) {
    String name = Xml.attr(c, "name");
    if (name != null) return checkKnown(c, name);
    String cls = Xml.attr(c, "class");
    if (cls == null) throw new IllegalArgumentException("<" + c.getTagName() + "> needs a class or a name");
    String base = cls.substring("solr.".length());
    if (base.endsWith(suffix)) base = base.substring(0, base.length() - suffix.length());
    else if (suffix.equals("FilterFactory") && base.endsWith("TokenFilterFactory")) {
      base = base.substring(0, base.length() - "TokenFilterFactory".length());
    }
    return checkKnown(c, base);
  }

  private static String checkKnown(Element c, String name) {
    List<String> known = new ArrayList<>();
    switch (c.getTagName()) {
      case "tokenizer": known.addAll(TokenizerFactory.availableTokenizers()); break;
      case "filter": known.addAll(TokenFilterFactory.availableTokenFilters()); break;
      default: known.addAll(CharFilterFactory.availableCharFilters());
    }
    for (String k : known) if (k.equalsIgnoreCase(name)) return k;
    String label = Xml.attr(c, "class") != null ? Xml.attr(c, "class") : name;
    throw new IllegalArgumentException("analysis factory " + label + " has no Lucene 8 equivalent");
  }

  /**
   * Solr's analysis of a wildcard, prefix, fuzzy or range term: an explicit multiterm chain must
   * give exactly one token; otherwise the query chain's multi-term-aware filters (lowercase,
   * ASCII folding, …) are applied, which is what Lucene's normalize() does.
   */
  static String multiTerm(Schema.FieldType type, String field, String text) {
    if (type.multiTerm == null) return type.query.normalize(field, text).utf8ToString();
    List<String> tokens = new ArrayList<>();
    try (TokenStream ts = type.multiTerm.tokenStream(field, text)) {
      CharTermAttribute term = ts.addAttribute(CharTermAttribute.class);
      ts.reset();
      while (ts.incrementToken()) tokens.add(term.toString());
      ts.end();
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
    if (tokens.size() > 1) {
      throw SolrError.bad("analyzer returned too many terms for multiTerm term: " + text);
    }
    return tokens.isEmpty() ? text : tokens.get(0);
  }
}
