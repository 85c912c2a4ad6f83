package joltgym;

import com.sun.jna.ptr.PointerByReference;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/**
 * A task of the native registry: its names, kind, truncation and keyword
 * arguments. {@link #find} takes any of its names: the registry name
 * ("half_cheetah"), the title ("HalfCheetah"), the Gymnasium id it
 * registers ("joltgym_marl/HalfCheetah-v0", "sumo_v0") or the Gymnasium id
 * it reproduces ("HalfCheetah-v5").
 */
public final class Task {
  /** A keyword argument: name, kind ("float", "int", ...), default as JSON, doc. */
  public record Param(String name, String kind, String defaultJson, String doc) {}

  private final String name;
  private final String kind;
  private final String title;
  private final String envId;
  private final String referenceId;
  private final String agentPrefix;
  private final int maxEpisodeSteps;
  private final List<Param> params;
  private final String doc;

  private Task(Native.TaskInfo info) {
    name = info.name;
    kind = info.kind;
    title = info.title;
    envId = info.env_id;
    referenceId = info.reference_id == null ? "" : info.reference_id;
    agentPrefix = info.agent_prefix == null ? "" : info.agent_prefix;
    maxEpisodeSteps = info.max_episode_steps;
    doc = info.doc;
    List<Param> ps = new ArrayList<>();
    for (int i = 0; i < info.num_params; ++i) {
      Native.ParamInfo p = new Native.ParamInfo();
      JoltgymException.check(Native.jg_task_param(name, i, p));
      ps.add(new Param(p.name, p.kind, p.default_json, p.doc));
    }
    params = Collections.unmodifiableList(ps);
  }

  /** Every registered task, in name order. */
  public static List<Task> all() {
    int[] count = new int[1];
    JoltgymException.check(Native.jg_task_count(count));
    List<Task> out = new ArrayList<>();
    for (int i = 0; i < count[0]; ++i) {
      PointerByReference p = new PointerByReference();
      JoltgymException.check(Native.jg_task_name(i, p));
      out.add(get(p.getValue().getString(0)));
    }
    return out;
  }

  /** The task of that registry name or title (the C API's own resolver). */
  static Task get(String nameOrTitle) {
    Native.TaskInfo info = new Native.TaskInfo();
    JoltgymException.check(Native.jg_task_info_get(nameOrTitle, info));
    return new Task(info);
  }

  /**
   * The task of any of its names, including the Gymnasium id it reproduces
   * ("HalfCheetah-v5"); a JoltgymException (JG_ERR_VALUE, the C API's words)
   * for an unknown one.
   */
  public static Task find(String id) {
    if (id == null) {
      throw new JoltgymException(JoltgymException.NULL, "task should be a task name, got null");
    }
    for (Task t : all()) {
      if (!t.referenceId.isEmpty() && t.referenceId.equalsIgnoreCase(id)) return t;
    }
    return get(id);
  }

  public String name() {
    return name;
  }

  /** "single_agent" or "game". */
  public String kind() {
    return kind;
  }

  public boolean isGame() {
    return "game".equals(kind);
  }

  public String title() {
    return title;
  }

  /** The Gymnasium id (robots) or PettingZoo module name (games) it registers. */
  public String envId() {
    return envId;
  }

  /** The Gymnasium id it reproduces ("HalfCheetah-v5"), or "". */
  public String referenceId() {
    return referenceId;
  }

  /** Games: agents are "&lt;prefix&gt;_&lt;k&gt;". */
  public String agentPrefix() {
    return agentPrefix;
  }

  public int maxEpisodeSteps() {
    return maxEpisodeSteps;
  }

  public List<Param> params() {
    return params;
  }

  /** The action / observation / reward / info tables. */
  public String doc() {
    return doc;
  }

  @Override
  public String toString() {
    return name.toLowerCase(Locale.ROOT);
  }
}
