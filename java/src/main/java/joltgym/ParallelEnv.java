package joltgym;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A game (several agents in one shared world) as a PettingZoo {@code
 * ParallelEnv}: {@code sumo_v0.parallel_env(**kwargs)} is {@code
 * ParallelEnv.make("sumo_v0", kwargs)}. Agents are named "&lt;prefix&gt;_&lt;k&gt;"
 * ("ant_0", "ant_1"); every agent has the same observation and action
 * spaces; observations and rewards are float32 (the games' dtype in
 * Python). Results come as maps by agent name or as arrays by agent index;
 * {@link #outcome(int)} is the episode's result for an agent as an int code
 * ({@link #ONGOING}, {@link #WIN}, {@link #LOSS}, {@link #DRAW}).
 */
public final class ParallelEnv implements AutoCloseable {
  public static final int ONGOING = 0;
  public static final int WIN = 1;
  public static final int LOSS = 2;
  public static final int DRAW = 3;

  /** A reset: observations and infos by agent name. */
  public record Reset(Map<String, float[]> observations, Map<String, Map<String, Object>> infos) {}

  /** A step by agent name (PettingZoo's five dicts). */
  public record Step(Map<String, float[]> observations, Map<String, Float> rewards,
      Map<String, Boolean> terminations, Map<String, Boolean> truncations,
      Map<String, Map<String, Object>> infos) {}

  /** A step by agent index: obs [numAgents][obsDim], the rest [numAgents]. */
  public record Arrays(float[][] observations, float[] rewards, boolean[] terminations,
      boolean[] truncations, int[] outcomes) {}

  private final Task task;
  private final Pool pool;
  private final List<String> possibleAgents;
  private final float[] staged;
  private final InfoLayout.Field outcomeField;
  private List<String> agents = List.of();
  private boolean started;

  private ParallelEnv(Task task, Map<String, ?> kwargs) {
    if (!task.isGame()) {
      throw new JoltgymException(JoltgymException.VALUE, task.name()
          + " is a single-agent task: use Env.make(\"" + task.envId() + "\")");
    }
    Map<String, Object> taskKwargs = new LinkedHashMap<>(kwargs);
    Object maxCycles = taskKwargs.remove("max_cycles");
    Pool.Builder b = Pool.builder(task.name()).numEnvs(1).numThreads(1)
        .dtype(Pool.Dtype.FLOAT32).kwargs(taskKwargs);
    if (maxCycles instanceof Number n) b.maxEpisodeSteps(n.intValue());
    this.task = task;
    this.pool = b.build();
    List<String> names = new ArrayList<>();
    for (int k = 0; k < pool.numAgents(); ++k) names.add(task.agentPrefix() + "_" + k);
    possibleAgents = Collections.unmodifiableList(names);
    staged = new float[pool.numAgents() * pool.actDim()];
    outcomeField = pool.infoLayout().field("outcome");
  }

  /** The game of a name ("sumo_v0", "sumo", "cheetah_race"), with its keyword arguments (and max_cycles). */
  public static ParallelEnv make(String id, Map<String, ?> kwargs) {
    return new ParallelEnv(Task.find(id), kwargs);
  }

  public static ParallelEnv make(String id) {
    return make(id, Map.of());
  }

  public Task task() {
    return task;
  }

  public List<String> possibleAgents() {
    return possibleAgents;
  }

  /** The agents still playing: all after a reset, none once the episode has ended. */
  public List<String> agents() {
    return agents;
  }

  public int numAgents() {
    return possibleAgents.size();
  }

  public Box observationSpace(String agent) {
    index(agent);
    return pool.observationSpace();
  }

  public Box actionSpace(String agent) {
    index(agent);
    return pool.actionSpace();
  }

  public int maxCycles() {
    return pool.maxEpisodeSteps();
  }

  /** The index of an agent's name. */
  public int index(String agent) {
    int i = possibleAgents.indexOf(agent);
    if (i < 0) {
      throw new JoltgymException(JoltgymException.VALUE,
          "agent should be one of " + possibleAgents + ", got " + agent);
    }
    return i;
  }

  public Pool pool() {
    return pool;
  }

  public Reset reset(long seed) {
    pool.reset(seed);
    return afterReset();
  }

  public Reset reset() {
    pool.reset();
    return afterReset();
  }

  private Reset afterReset() {
    started = true;
    agents = possibleAgents;
    Map<String, float[]> obs = new LinkedHashMap<>();
    Map<String, Map<String, Object>> infos = new LinkedHashMap<>();
    for (int k = 0; k < numAgents(); ++k) {
      obs.put(possibleAgents.get(k), observation(k));
      infos.put(possibleAgents.get(k), pool.info(k));
    }
    return new Reset(obs, infos);
  }

  private float[] observation(int k) {
    float[] out = new float[pool.obsDim()];
    pool.obs32().get(k * pool.obsDim(), out);
    return out;
  }

  /** One step; every playing agent needs an action. */
  public Step step(Map<String, float[]> actions) {
    checkPlaying();
    if (actions == null) {
      throw new JoltgymException(JoltgymException.NULL, "actions should be a map of agent to action, got null");
    }
    for (String name : actions.keySet()) index(name);
    float[][] rows = new float[numAgents()][];
    for (int k = 0; k < numAgents(); ++k) {
      rows[k] = actions.get(possibleAgents.get(k));
      if (rows[k] == null) {
        throw new JoltgymException(JoltgymException.VALUE,
            "actions is missing agent " + possibleAgents.get(k) + " (every agent acts every step)");
      }
    }
    Arrays a = stepArrays(rows);
    Map<String, float[]> obs = new LinkedHashMap<>();
    Map<String, Float> rewards = new LinkedHashMap<>();
    Map<String, Boolean> terms = new LinkedHashMap<>();
    Map<String, Boolean> truncs = new LinkedHashMap<>();
    Map<String, Map<String, Object>> infos = new LinkedHashMap<>();
    for (int k = 0; k < numAgents(); ++k) {
      String n = possibleAgents.get(k);
      obs.put(n, a.observations[k]);
      rewards.put(n, a.rewards[k]);
      terms.put(n, a.terminations[k]);
      truncs.put(n, a.truncations[k]);
      infos.put(n, pool.info(k));
    }
    return new Step(obs, rewards, terms, truncs, infos);
  }

  /** One step with actions by agent index ([numAgents][actDim]). */
  public Arrays stepArrays(float[][] actions) {
    checkPlaying();
    int n = numAgents();
    int d = pool.actDim();
    if (actions == null || actions.length != n) {
      throw new JoltgymException(JoltgymException.VALUE, "actions should be " + n + " rows, got "
          + (actions == null ? "null" : actions.length));
    }
    for (int k = 0; k < n; ++k) {
      if (actions[k] == null || actions[k].length != d) {
        throw new JoltgymException(JoltgymException.VALUE, "the action of " + possibleAgents.get(k)
            + " should hold " + d + " values, got " + (actions[k] == null ? "null" : actions[k].length));
      }
      System.arraycopy(actions[k], 0, staged, k * d, d);
    }
    pool.step(staged);
    float[][] obs = new float[n][];
    float[] rewards = new float[n];
    boolean[] terms = new boolean[n];
    boolean[] truncs = new boolean[n];
    int[] outcomes = new int[n];
    boolean over = false;
    for (int k = 0; k < n; ++k) {
      obs[k] = observation(k);
      rewards[k] = (float) pool.reward(k);
      terms[k] = pool.terminated(k);
      truncs[k] = pool.truncated(k);
      outcomes[k] = outcome(k);
      over |= terms[k] || truncs[k];
    }
    if (over) agents = List.of();
    return new Arrays(obs, rewards, terms, truncs, outcomes);
  }

  /** The last step's outcome for agent k: ONGOING, WIN, LOSS or DRAW (ONGOING in games without one). */
  public int outcome(int k) {
    if (outcomeField == null) return ONGOING;
    return (int) pool.info().get(k * pool.infoLayout().width() + outcomeField.offset());
  }

  private void checkPlaying() {
    if (pool.isClosed()) throw new JoltgymException(JoltgymException.STATE, "ParallelEnv is closed");
    if (!started) {
      throw new JoltgymException(JoltgymException.STATE, "call reset() before step()");
    }
    if (agents.isEmpty()) {
      throw new JoltgymException(JoltgymException.STATE,
          "the episode has ended (every agent is done): call reset() before step()");
    }
  }

  @Override
  public void close() {
    pool.close();
  }
}
