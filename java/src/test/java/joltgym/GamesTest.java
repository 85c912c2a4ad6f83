package joltgym;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/** Every game as a parallel multi-agent env: agents, spaces, maps and arrays, outcomes. */
class GamesTest {
  @TestFactory
  List<DynamicTest> everyGamePlaysABout() {
    List<DynamicTest> tests = new ArrayList<>();
    for (Task t : Task.all()) {
      if (!t.isGame()) continue;
      tests.add(DynamicTest.dynamicTest(t.envId(), () -> play(t)));
    }
    assertTrue(tests.size() >= 2);
    return tests;
  }

  private static void play(Task t) {
    try (ParallelEnv env = ParallelEnv.make(t.envId(), Map.of("max_cycles", 30))) {
      int n = env.numAgents();
      assertEquals(n, env.possibleAgents().size());
      for (int k = 0; k < n; ++k) {
        assertEquals(t.agentPrefix() + "_" + k, env.possibleAgents().get(k));
      }
      assertEquals(List.of(), env.agents());
      String first = env.possibleAgents().get(0);
      Box obsSpace = env.observationSpace(first);
      Box actSpace = env.actionSpace(first);
      assertEquals("float32", obsSpace.dtype());
      for (String a : env.possibleAgents()) {
        assertEquals(obsSpace, env.observationSpace(a));
        assertEquals(actSpace, env.actionSpace(a));
      }
      assertThrows(JoltgymException.class, () -> env.stepArrays(new float[n][actSpace.size()]));
      ParallelEnv.Reset r = env.reset(5);
      assertEquals(env.possibleAgents(), new ArrayList<>(r.observations().keySet()));
      assertEquals(obsSpace.size(), r.observations().get(first).length);
      actSpace.seed(1);
      int steps = 0;
      ParallelEnv.Arrays last = null;
      boolean useMaps = true;
      while (!env.agents().isEmpty()) {
        if (useMaps) {
          Map<String, float[]> actions = new LinkedHashMap<>();
          for (String a : env.agents()) actions.put(a, actSpace.sampleFloats());
          ParallelEnv.Step s = env.step(actions);
          assertEquals(env.possibleAgents(), new ArrayList<>(s.rewards().keySet()));
          for (String a : env.possibleAgents()) {
            int code = env.outcome(env.index(a));
            assertTrue(code >= ParallelEnv.ONGOING && code <= ParallelEnv.DRAW);
            Object label = s.infos().get(a).get("outcome");
            if (label != null) {
              assertEquals(List.of("ongoing", "win", "loss", "draw").get(code), label);
            }
          }
        } else {
          float[][] actions = new float[n][];
          for (int k = 0; k < n; ++k) actions[k] = actSpace.sampleFloats();
          last = env.stepArrays(actions);
          assertEquals(n, last.observations().length);
          assertEquals(n, last.outcomes().length);
        }
        useMaps = !useMaps;
        ++steps;
      }
      assertTrue(steps <= 30, "max_cycles 30 ends the bout by step 30, took " + steps);
      if (last != null) {
        for (int code : last.outcomes()) assertTrue(code >= ParallelEnv.ONGOING && code <= ParallelEnv.DRAW);
      }
      JoltgymException e = assertThrows(JoltgymException.class,
          () -> env.stepArrays(new float[n][actSpace.size()]));
      assertEquals(JoltgymException.STATE, e.status());
      JoltgymException bad = assertThrows(JoltgymException.class, () -> env.observationSpace("nobody"));
      assertTrue(bad.detail().contains(first), bad.detail());
      env.reset(5);
      float[][] zeros = new float[n][actSpace.size()];
      ParallelEnv.Arrays a = env.stepArrays(zeros);
      env.reset(5);
      assertArrayEquals(a.observations()[0], env.stepArrays(zeros).observations()[0],
          "the same seed and actions give the same bout");
    }
  }
}
