package joltgym;

import com.sun.jna.ptr.PointerByReference;
import java.nio.DoubleBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * How an agent's info record (info_width float64 values) holds its fields,
 * as Python's InfoDecoder reads it: a real (Double, or double[] when its
 * size is above 1), an integer (Long) or a label (String: "win", ...).
 */
public final class InfoLayout {
  /** One field of the record. */
  public record Field(String name, int offset, int size, boolean atReset, int kind,
      List<String> labels) {
    public static final int REAL = 0;
    public static final int INTEGER = 1;
    public static final int LABEL = 2;

    /** The field's value in the record starting at base. */
    public Object decode(DoubleBuffer info, int base) {
      if (kind == INTEGER) return (long) info.get(base + offset);
      if (kind == LABEL) {
        int label = (int) info.get(base + offset);
        return label >= 0 && label < labels.size() ? labels.get(label) : "label " + label;
      }
      if (size == 1) return info.get(base + offset);
      double[] out = new double[size];
      for (int i = 0; i < size; ++i) out[i] = info.get(base + offset + i);
      return out;
    }
  }

  private final int width;
  private final List<Field> fields;

  InfoLayout(long pool, Native.Dims dims) {
    width = dims.info_width;
    List<Field> fs = new ArrayList<>();
    for (int i = 0; i < dims.num_info_fields; ++i) {
      Native.InfoField f = new Native.InfoField();
      JoltgymException.check(Native.jg_pool_info_field(pool, i, f));
      List<String> labels = new ArrayList<>();
      for (int k = 0; k < f.num_labels; ++k) {
        PointerByReference text = new PointerByReference();
        JoltgymException.check(Native.jg_pool_info_label(pool, i, k, text));
        labels.add(text.getValue().getString(0));
      }
      fs.add(new Field(f.name, f.offset, f.size, f.at_reset != 0, f.kind,
          Collections.unmodifiableList(labels)));
    }
    fields = Collections.unmodifiableList(fs);
  }

  /** float64 values per agent's record. */
  public int width() {
    return width;
  }

  public List<Field> fields() {
    return fields;
  }

  /** The field of that name, or null. */
  public Field field(String name) {
    for (Field f : fields) {
      if (f.name.equals(name)) return f;
    }
    return null;
  }

  /**
   * The record of agent row `row` (world * num_agents + agent) as a map, in
   * field order; after a reset only the fields resets write (Python's reset
   * info).
   */
  public Map<String, Object> decode(DoubleBuffer info, int row, boolean afterReset) {
    Map<String, Object> out = new LinkedHashMap<>();
    int base = row * width;
    for (Field f : fields) {
      if (!afterReset || f.atReset) out.put(f.name, f.decode(info, base));
    }
    return out;
  }
}
