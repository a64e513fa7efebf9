package solrdev;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.xml.XMLConstants;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Element;
import org.w3c.dom.NamedNodeMap;
import org.w3c.dom.Node;

/** Reading Solr's XML config files with the JDK's DOM parser. */
final class Xml {
  private Xml() {}

  private static final Pattern PROPERTY = Pattern.compile("\\$\\{([^}:]+)(?::([^}]*))?\\}");

  static Element load(Path file) throws Exception {
    DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
    f.setFeature(XMLConstants.FEATURE_SECURE_PROCESSING, true);
    f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
    f.setXIncludeAware(false);
    f.setExpandEntityReferences(false);
    return f.newDocumentBuilder().parse(file.toFile()).getDocumentElement();
  }

  static List<Element> children(Element parent) {
    List<Element> out = new ArrayList<>();
    for (Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
      if (n instanceof Element) out.add((Element) n);
    }
    return out;
  }

  static List<Element> children(Element parent, String... names) {
    List<Element> out = new ArrayList<>();
    for (Element e : children(parent)) {
      for (String name : names) if (e.getTagName().equals(name)) out.add(e);
    }
    return out;
  }

  /** Attributes in document order, ${sys.prop:default} substituted as Solr does. */
  static Map<String, String> attributes(Element e) {
    Map<String, String> out = new LinkedHashMap<>();
    NamedNodeMap attrs = e.getAttributes();
    for (int i = 0; i < attrs.getLength(); i++) {
      Node a = attrs.item(i);
      out.put(a.getNodeName(), substitute(a.getNodeValue()));
    }
    return out;
  }

  static String attr(Element e, String name) {
    return e.hasAttribute(name) ? substitute(e.getAttribute(name)) : null;
  }

  static String text(Element e) {
    return substitute(e.getTextContent().trim());
  }

  static String substitute(String s) {
    if (s == null || !s.contains("${")) return s;
    Matcher m = PROPERTY.matcher(s);
    StringBuilder sb = new StringBuilder();
    while (m.find()) {
      String v = System.getProperty(m.group(1), m.group(2) == null ? "" : m.group(2));
      m.appendReplacement(sb, Matcher.quoteReplacement(v));
    }
    m.appendTail(sb);
    return sb.toString();
  }
}
