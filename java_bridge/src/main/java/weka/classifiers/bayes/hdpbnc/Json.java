/*
 *   This program is free software: you can redistribute it and/or modify
 *   it under the terms of the GNU General Public License as published by
 *   the Free Software Foundation, either version 3 of the License, or
 *   (at your option) any later version.
 */

package weka.classifiers.bayes.hdpbnc;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A minimal JSON reader and writer (RFC 8259), enough for the model file's metadata and the spool's
 * small documents, so the package ships no JSON library.
 *
 * <p>Values map to {@code Map<String, Object>} (insertion-ordered), {@code List<Object>},
 * {@code String}, {@code Long} (integers without fraction or exponent that fit; read strictly, larger ones are
 * {@code java.math.BigInteger}, else {@code Double}), {@code Double},
 * {@code Boolean} and {@code null}. Doubles are parsed with {@link Double#parseDouble}, which rounds
 * correctly, so Python's shortest round-trip floats come back bit for bit. Numbers follow JSON's grammar
 * exactly (no leading zeros, plus signs, bare points or exponents, NaN or Infinity), and objects and
 * arrays nest at most {@link #MAX_NESTING} deep.
 */
public final class Json {

  /**
   * The deepest nesting of objects and arrays read; hdp_plugin's model reader has the same bound
   * (modelfile.MAX_JSON_NESTING), so that both refuse the same model files.
   */
  public static final int MAX_NESTING = 200;

  /**
   * The most digits of an integer read strictly (a model file's documents), as hdp_plugin's model reader
   * (modelfile.MAX_JSON_INTEGER_DIGITS, Python's default bound on reading text as an integer).
   */
  public static final int MAX_INTEGER_DIGITS = 4300;

  private final String m_Text;
  private final boolean m_Strict;
  private int m_Pos;

  private Json(String text, boolean strict) {
    m_Text = text;
    m_Strict = strict;
  }

  /** Parses one JSON document; malformed input throws an IllegalArgumentException with the offset. */
  public static Object parse(String text) {
    return parse(text, false);
  }

  /**
   * Parses one JSON document held as UTF-8 bytes, strictly: bytes that are not UTF-8 (overlong forms,
   * encoded surrogates, cut sequences, code points above U+10FFFF) and escapes (backslash, u, four hex
   * digits) that spell a surrogate outside a high-low pair are errors, as they are to hdp_plugin's model
   * reader (no UTF-8 text holds a lone surrogate).
   *
   * @param utf8 the document's bytes
   * @return the value
   * @throws IllegalArgumentException on bytes that are not UTF-8 or malformed input
   */
  public static Object parseUtf8(byte[] utf8) {
    String text;
    try {
      text = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
        .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(utf8)).toString();
    } catch (CharacterCodingException e) {
      throw new IllegalArgumentException("not UTF-8 (" + e + ")", e);
    }
    return parse(text, true);
  }

  private static Object parse(String text, boolean strict) {
    Json p = new Json(text, strict);
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

  /** @param depth the number of objects and arrays around the value */
  private Object value(int depth) {
    if (m_Pos >= m_Text.length()) {
      throw error("unexpected end");
    }
    char c = m_Text.charAt(m_Pos);
    if ((c == '{' || c == '[') && depth >= MAX_NESTING) {
      throw error("nested deeper than " + MAX_NESTING);
    }
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
        if (m_Strict) {
          checkSurrogates(sb);
        }
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
      int simple = "\"\\/bfnrt".indexOf(e);
      if (simple >= 0) {
        sb.append("\"\\/\b\f\n\r\t".charAt(simple));
        continue;
      }
      if (e != 'u') {
        throw error("bad escape \\" + e);
      }
      if (m_Pos + 4 > m_Text.length()) {
        throw error("short \\u escape");
      }
      int code = 0;
      for (int i = 0; i < 4; i++) {
        int d = Character.digit(m_Text.charAt(m_Pos + i), 16);
        if (d < 0 || m_Text.charAt(m_Pos + i) > 'f') { // ASCII hex digits only
          throw error("bad \\u escape");
        }
        code = code * 16 + d;
      }
      sb.append((char) code);
      m_Pos += 4;
    }
  }

  /** Refuses a surrogate that is not part of a high-low pair (a string decoded from an escape). */
  private void checkSurrogates(CharSequence s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
        i++;
      } else if (Character.isSurrogate(c)) {
        throw error(String.format("a lone surrogate \\u%04x in a string", (int) c));
      }
    }
  }

  private boolean digit() {
    return m_Pos < m_Text.length() && m_Text.charAt(m_Pos) >= '0' && m_Text.charAt(m_Pos) <= '9';
  }

  /** Skips one or more digits. */
  private void digits() {
    if (!digit()) {
      throw error(m_Pos < m_Text.length() ? "unexpected character" : "unexpected end");
    }
    while (digit()) {
      m_Pos++;
    }
  }

  /** A number of JSON's grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
  private Object number() {
    int start = m_Pos;
    boolean integral = true;
    if (peek('-')) {
      m_Pos++;
    }
    if (peek('0')) {
      m_Pos++;
    } else {
      digits();
    }
    if (peek('.')) {
      integral = false;
      m_Pos++;
      digits();
    }
    if (peek('e') || peek('E')) {
      integral = false;
      m_Pos++;
      if (peek('+') || peek('-')) {
        m_Pos++;
      }
      digits();
    }
    String s = m_Text.substring(start, m_Pos);
    try {
      if (integral) {
        try {
          return Long.parseLong(s);
        } catch (NumberFormatException big) { // strictly: an integer still, of any size (a model's seeds)
          if (m_Strict && s.length() - (s.startsWith("-") ? 1 : 0) > MAX_INTEGER_DIGITS) {
            throw error("an integer of more than " + MAX_INTEGER_DIGITS + " digits");
          }
          return m_Strict ? (Object) new java.math.BigInteger(s) : (Object) Double.parseDouble(s);
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
   * Writes a value (maps, lists, strings, numbers, booleans, null) as compact JSON; a non-finite double or
   * a value of another type throws an IllegalArgumentException.
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
      String sep = "";
      for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
        quote(sb.append(sep), String.valueOf(e.getKey()));
        write(sb.append(':'), e.getValue());
        sep = ",";
      }
      sb.append('}');
    } else if (v instanceof Iterable) {
      sb.append('[');
      String sep = "";
      for (Object item : (Iterable<?>) v) {
        write(sb.append(sep), item);
        sep = ",";
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
      int escaped = "\"\\\n\r\t".indexOf(c);
      if (escaped >= 0) {
        sb.append('\\').append("\"\\nrt".charAt(escaped));
      } else if (c < 0x20) {
        sb.append(String.format("\\u%04x", (int) c));
      } else {
        sb.append(c);
      }
    }
    sb.append('"');
  }
}
