/*
 *   This program is free software: you can redistribute it and/or modify
 *   it under the terms of the GNU General Public License as published by
 *   the Free Software Foundation, either version 3 of the License, or
 *   (at your option) any later version.
 */

package weka.classifiers.bayes.hdpbnc;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A minimal JSON reader and writer (RFC 8259), enough for the model file's metadata and the spool's
 * small documents, so the package ships no JSON library.
 *
 * <p>Values map to {@code Map<String, Object>} (insertion-ordered), {@code List<Object>},
 * {@code String}, {@code Long} (integers without fraction or exponent that fit), {@code Double},
 * {@code Boolean} and {@code null}. Doubles are parsed with {@link Double#parseDouble}, which rounds
 * correctly, so Python's shortest round-trip floats come back bit for bit.
 */
public final class Json {

  private final String m_Text;
  private int m_Pos;

  private Json(String text) {
    m_Text = text;
  }

  /**
   * Parses one JSON document.
   *
   * @param text the document
   * @return the value
   * @throws IllegalArgumentException on malformed input, with the character offset
   */
  public static Object parse(String text) {
    Json p = new Json(text);
    p.skipSpace();
    Object v = p.value(0);
    p.skipSpace();
    if (p.m_Pos != text.length()) {
      throw p.error("trailing characters");
    }
    return v;
  }

  private IllegalArgumentException error(String what) {
    return new IllegalArgumentException("bad JSON at offset " + m_Pos + ": " + what);
  }

  private void skipSpace() {
    while (m_Pos < m_Text.length()) {
      char c = m_Text.charAt(m_Pos);
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        m_Pos++;
      } else {
        break;
      }
    }
  }

  private Object value(int depth) {
    if (depth > 200) {
      throw error("nested too deeply");
    }
    if (m_Pos >= m_Text.length()) {
      throw error("unexpected end");
    }
    char c = m_Text.charAt(m_Pos);
    switch (c) {
      case '{': {
        m_Pos++;
        Map<String, Object> map = new LinkedHashMap<>();
        skipSpace();
        if (peek('}')) {
          m_Pos++;
          return map;
        }
        while (true) {
          skipSpace();
          if (!peek('"')) {
            throw error("expected a string key");
          }
          String key = string();
          skipSpace();
          expect(':');
          skipSpace();
          map.put(key, value(depth + 1));
          skipSpace();
          if (peek(',')) {
            m_Pos++;
          } else {
            expect('}');
            return map;
          }
        }
      }
      case '[': {
        m_Pos++;
        List<Object> list = new ArrayList<>();
        skipSpace();
        if (peek(']')) {
          m_Pos++;
          return list;
        }
        while (true) {
          skipSpace();
          list.add(value(depth + 1));
          skipSpace();
          if (peek(',')) {
            m_Pos++;
          } else {
            expect(']');
            return list;
          }
        }
      }
      case '"':
        return string();
      case 't':
        literal("true");
        return Boolean.TRUE;
      case 'f':
        literal("false");
        return Boolean.FALSE;
      case 'n':
        literal("null");
        return null;
      default:
        return number();
    }
  }

  private boolean peek(char c) {
    return m_Pos < m_Text.length() && m_Text.charAt(m_Pos) == c;
  }

  private void expect(char c) {
    if (!peek(c)) {
      throw error("expected '" + c + "'");
    }
    m_Pos++;
  }

  private void literal(String word) {
    if (!m_Text.startsWith(word, m_Pos)) {
      throw error("expected " + word);
    }
    m_Pos += word.length();
  }

  private String string() {
    expect('"');
    StringBuilder sb = new StringBuilder();
    while (true) {
      if (m_Pos >= m_Text.length()) {
        throw error("unterminated string");
      }
      char c = m_Text.charAt(m_Pos++);
      if (c == '"') {
        return sb.toString();
      }
      if (c < 0x20) {
        throw error("control character in string");
      }
      if (c != '\\') {
        sb.append(c);
        continue;
      }
      if (m_Pos >= m_Text.length()) {
        throw error("unterminated escape");
      }
      char e = m_Text.charAt(m_Pos++);
      switch (e) {
        case '"':
        case '\\':
        case '/':
          sb.append(e);
          break;
        case 'b':
          sb.append('\b');
          break;
        case 'f':
          sb.append('\f');
          break;
        case 'n':
          sb.append('\n');
          break;
        case 'r':
          sb.append('\r');
          break;
        case 't':
          sb.append('\t');
          break;
        case 'u':
          if (m_Pos + 4 > m_Text.length()) {
            throw error("short \\u escape");
          }
          try {
            sb.append((char) Integer.parseInt(m_Text.substring(m_Pos, m_Pos + 4), 16));
          } catch (NumberFormatException ex) {
            throw error("bad \\u escape");
          }
          m_Pos += 4;
          break;
        default:
          throw error("bad escape \\" + e);
      }
    }
  }

  private Object number() {
    int start = m_Pos;
    boolean integral = true;
    if (peek('-')) {
      m_Pos++;
    }
    while (m_Pos < m_Text.length()) {
      char c = m_Text.charAt(m_Pos);
      if (c >= '0' && c <= '9') {
        m_Pos++;
      } else if (c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
        integral = false;
        m_Pos++;
      } else {
        break;
      }
    }
    String s = m_Text.substring(start, m_Pos);
    if (s.isEmpty() || s.equals("-")) {
      throw error("unexpected character");
    }
    try {
      if (integral) {
        try {
          return Long.parseLong(s);
        } catch (NumberFormatException big) {
          return Double.parseDouble(s);
        }
      }
      return Double.parseDouble(s);
    } catch (NumberFormatException ex) {
      throw error("bad number " + s);
    }
  }

  // ------------------------------------------------------------------------------------------
  // writing
  // ------------------------------------------------------------------------------------------

  /**
   * Writes a value (maps, lists, strings, numbers, booleans, null) as compact JSON.
   *
   * @param value the value
   * @return the JSON text
   * @throws IllegalArgumentException for non-finite doubles or values of other types
   */
  public static String write(Object value) {
    StringBuilder sb = new StringBuilder();
    write(sb, value);
    return sb.toString();
  }

  private static void write(StringBuilder sb, Object v) {
    if (v == null) {
      sb.append("null");
    } else if (v instanceof String) {
      quote(sb, (String) v);
    } else if (v instanceof Boolean || v instanceof Integer || v instanceof Long) {
      sb.append(v);
    } else if (v instanceof Double || v instanceof Float) {
      double d = ((Number) v).doubleValue();
      if (Double.isNaN(d) || Double.isInfinite(d)) {
        throw new IllegalArgumentException("JSON has no " + d);
      }
      sb.append(d == Math.rint(d) && Math.abs(d) < 1e15 ? Long.toString((long) d) + ".0" : Double.toString(d));
    } else if (v instanceof Map) {
      sb.append('{');
      Iterator<? extends Map.Entry<?, ?>> it = ((Map<?, ?>) v).entrySet().iterator();
      while (it.hasNext()) {
        Map.Entry<?, ?> e = it.next();
        quote(sb, String.valueOf(e.getKey()));
        sb.append(':');
        write(sb, e.getValue());
        if (it.hasNext()) {
          sb.append(',');
        }
      }
      sb.append('}');
    } else if (v instanceof Iterable) {
      sb.append('[');
      Iterator<?> it = ((Iterable<?>) v).iterator();
      while (it.hasNext()) {
        write(sb, it.next());
        if (it.hasNext()) {
          sb.append(',');
        }
      }
      sb.append(']');
    } else {
      throw new IllegalArgumentException("cannot write a " + v.getClass().getName() + " as JSON");
    }
  }

  private static void quote(StringBuilder sb, String s) {
    sb.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"':
          sb.append("\\\"");
          break;
        case '\\':
          sb.append("\\\\");
          break;
        case '\n':
          sb.append("\\n");
          break;
        case '\r':
          sb.append("\\r");
          break;
        case '\t':
          sb.append("\\t");
          break;
        default:
          if (c < 0x20) {
            sb.append(String.format("\\u%04x", (int) c));
          } else {
            sb.append(c);
          }
      }
    }
    sb.append('"');
  }
}
