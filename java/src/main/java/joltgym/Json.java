package joltgym;

import java.util.Collection;
import java.util.Map;

/** Keyword arguments as the one JSON object jg_pool_create_json takes. */
final class Json {
  private Json() {}

  static String object(Map<String, ?> kwargs) {
    StringBuilder sb = new StringBuilder("{");
    boolean first = true;
    for (Map.Entry<String, ?> e : kwargs.entrySet()) {
      if (!first) sb.append(", ");
      first = false;
      string(sb, e.getKey());
      sb.append(": ");
      value(sb, e.getKey(), e.getValue());
    }
    return sb.append('}').toString();
  }

  private static void value(StringBuilder sb, String key, Object v) {
    if (v == null) {
      sb.append("null");
    } else if (v instanceof Boolean b) {
      sb.append(b ? "true" : "false");
    } else if (v instanceof Double || v instanceof Float) {
      number(sb, ((Number) v).doubleValue());
    } else if (v instanceof Number n) {
      sb.append(n.longValue());
    } else if (v instanceof CharSequence s) {
      string(sb, s.toString());
    } else if (v instanceof double[] a) {
      sb.append('[');
      for (int i = 0; i < a.length; ++i) {
        if (i > 0) sb.append(", ");
        number(sb, a[i]);
      }
      sb.append(']');
    } else if (v instanceof float[] a) {
      sb.append('[');
      for (int i = 0; i < a.length; ++i) {
        if (i > 0) sb.append(", ");
        number(sb, a[i]);
      }
      sb.append(']');
    } else if (v instanceof int[] a) {
      sb.append('[');
      for (int i = 0; i < a.length; ++i) sb.append(i > 0 ? ", " : "").append(a[i]);
      sb.append(']');
    } else if (v instanceof Collection<?> c) {
      sb.append('[');
      boolean first = true;
      for (Object o : c) {
        if (!first) sb.append(", ");
        first = false;
        value(sb, key, o);
      }
      sb.append(']');
    } else {
      throw new JoltgymException(JoltgymException.TYPE, "keyword argument " + key
          + " should be a number, bool, string, null or a list of them, got a "
          + v.getClass().getName());
    }
  }

  private static void number(StringBuilder sb, double d) {
    if (Double.isInfinite(d)) {
      sb.append(d > 0 ? "Infinity" : "-Infinity");  // the C API reads these words as numbers
    } else if (Double.isNaN(d)) {
      sb.append("NaN");  // not JSON: the C API names the bad value
    } else {
      sb.append(Double.toString(d));
    }
  }

  private static void string(StringBuilder sb, String s) {
    sb.append('"');
    for (int i = 0; i < s.length(); ++i) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> sb.append("\\\"");
        case '\\' -> sb.append("\\\\");
        case '\n' -> sb.append("\\n");
        case '\t' -> sb.append("\\t");
        case '\r' -> sb.append("\\r");
        default -> {
          if (c < 0x20) {
            sb.append(String.format("\\u%04x", (int) c));
          } else {
            sb.append(c);
          }
        }
      }
    }
    sb.append('"');
  }
}
