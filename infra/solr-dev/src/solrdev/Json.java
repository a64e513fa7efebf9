package solrdev;

import java.math.BigInteger;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Minimal JSON reader and writer. The JDK has none, and Solr's update format needs a reader that
 * keeps repeated keys in order ({"add":…,"add":…,"commit":{}}), which ordinary maps lose.
 */
final class Json {
  private Json() {}

  /** A JSON object as an ordered list of entries; keys may repeat. */
  static final class Obj {
    final List<String> keys = new ArrayList<>();
    final List<Object> values = new ArrayList<>();

    int size() {
      return keys.size();
    }

    /** The first value under this key, or null. */
    Object get(String key) {
      int i = keys.indexOf(key);
      return i < 0 ? null : values.get(i);
    }

    boolean has(String key) {
      return keys.contains(key);
    }
  }

  // ---------------------------------------------------------------- reading

  static Object parse(String text) {
    Reader r = new Reader(text);
    r.skipWs();
    Object v = r.value();
    r.skipWs();
    if (r.pos != text.length()) throw r.error("Unexpected trailing characters");
    return v;
  }

  private static final class Reader {
    final String s;
    int pos;

    Reader(String s) {
      this.s = s;
    }

    SolrError error(String what) {
      return SolrError.bad("Cannot parse provided JSON: " + what + " at char " + pos);
    }

    void skipWs() {
      while (pos < s.length()) {
        char c = s.charAt(pos);
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') pos++;
        else break;
      }
    }

    Object value() {
      if (pos >= s.length()) throw error("Unexpected end of input");
      char c = s.charAt(pos);
      switch (c) {
        case '{':
          return object();
        case '[':
          return array();
        case '"':
          return string();
        case 't':
          return literal("true", Boolean.TRUE);
        case 'f':
          return literal("false", Boolean.FALSE);
        case 'n':
          return literal("null", null);
        default:
          if (c == '-' || (c >= '0' && c <= '9')) return number();
          throw error("Unexpected character '" + c + "'");
      }
    }

    Object literal(String word, Object v) {
      if (!s.startsWith(word, pos)) throw error("Invalid literal");
      pos += word.length();
      return v;
    }

    Obj object() {
      Obj o = new Obj();
      pos++;
      skipWs();
      if (peek() == '}') {
        pos++;
        return o;
      }
      while (true) {
        skipWs();
        if (peek() != '"') throw error("Expected a key");
        String k = string();
        skipWs();
        if (peek() != ':') throw error("Expected ':'");
        pos++;
        skipWs();
        o.keys.add(k);
        o.values.add(value());
        skipWs();
        char c = peek();
        pos++;
        if (c == '}') return o;
        if (c != ',') throw error("Expected ',' or '}'");
      }
    }

    List<Object> array() {
      List<Object> list = new ArrayList<>();
      pos++;
      skipWs();
      if (peek() == ']') {
        pos++;
        return list;
      }
      while (true) {
        skipWs();
        list.add(value());
        skipWs();
        char c = peek();
        pos++;
        if (c == ']') return list;
        if (c != ',') throw error("Expected ',' or ']'");
      }
    }

    char peek() {
      if (pos >= s.length()) throw error("Unexpected end of input");
      return s.charAt(pos);
    }

    String string() {
      StringBuilder sb = new StringBuilder();
      pos++;
      while (true) {
        if (pos >= s.length()) throw error("Unterminated string");
        char c = s.charAt(pos++);
        if (c == '"') return sb.toString();
        if (c != '\\') {
          sb.append(c);
          continue;
        }
        if (pos >= s.length()) throw error("Unterminated string");
        char e = s.charAt(pos++);
        switch (e) {
          case 'n': sb.append('\n'); break;
          case 't': sb.append('\t'); break;
          case 'r': sb.append('\r'); break;
          case 'b': sb.append('\b'); break;
          case 'f': sb.append('\f'); break;
          case 'u':
            if (pos + 4 > s.length()) throw error("Bad unicode escape");
            sb.append((char) Integer.parseInt(s.substring(pos, pos + 4), 16));
            pos += 4;
            break;
          default: sb.append(e);
        }
      }
    }

    /** Integers become Long (too big: the digits as a String, as Solr does); others Double. */
    Object number() {
      int start = pos;
      boolean integral = true;
      if (s.charAt(pos) == '-') pos++;
      while (pos < s.length()) {
        char c = s.charAt(pos);
        if (c >= '0' && c <= '9') pos++;
        else if (c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
          integral = false;
          pos++;
        } else break;
      }
      String digits = s.substring(start, pos);
      try {
        if (integral) {
          BigInteger big = new BigInteger(digits);
          return big.bitLength() < 64 ? (Object) big.longValue() : digits;
        }
        return Double.parseDouble(digits);
      } catch (NumberFormatException e) {
        throw error("Invalid number '" + digits + "'");
      }
    }
  }

  // ---------------------------------------------------------------- writing

  static String write(Object value) {
    StringBuilder sb = new StringBuilder(256);
    write(sb, value);
    return sb.toString();
  }

  /** Numbers are written the way Solr's JSON writer writes them (Float.toString and so on). */
  static void write(StringBuilder sb, Object v) {
    if (v == null) {
      sb.append("null");
    } else if (v instanceof String) {
      quote(sb, (String) v);
    } else if (v instanceof Boolean || v instanceof Integer || v instanceof Long) {
      sb.append(v);
    } else if (v instanceof Float) {
      float f = (Float) v;
      if (Float.isNaN(f) || Float.isInfinite(f)) quote(sb, v.toString());
      else sb.append(Float.toString(f));
    } else if (v instanceof Double) {
      double d = (Double) v;
      if (Double.isNaN(d) || Double.isInfinite(d)) quote(sb, v.toString());
      else sb.append(Double.toString(d));
    } else if (v instanceof Instant) {
      quote(sb, v.toString());
    } else if (v instanceof Map) {
      sb.append('{');
      boolean first = true;
      for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
        if (!first) sb.append(',');
        first = false;
        quote(sb, String.valueOf(e.getKey()));
        sb.append(':');
        write(sb, e.getValue());
      }
      sb.append('}');
    } else if (v instanceof Iterable) {
      sb.append('[');
      boolean first = true;
      for (Object o : (Iterable<?>) v) {
        if (!first) sb.append(',');
        first = false;
        write(sb, o);
      }
      sb.append(']');
    } else {
      quote(sb, v.toString());
    }
  }

  static void quote(StringBuilder sb, String s) {
    sb.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"': sb.append("\\\""); break;
        case '\\': sb.append("\\\\"); break;
        case '\n': sb.append("\\n"); break;
        case '\r': sb.append("\\r"); break;
        case '\t': sb.append("\\t"); break;
        default:
          if (c < 0x20) sb.append(String.format("\\u%04x", (int) c));
          else sb.append(c);
      }
    }
    sb.append('"');
  }
}
