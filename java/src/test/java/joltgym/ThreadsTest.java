package joltgym;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/** One object from two threads: an exception (JG_ERR_BUSY) for the second, never a crash. */
class ThreadsTest {
  @Test
  void aSecondThreadInsideOnePoolGetsBusy() throws Exception {
    try (Pool pool = Pool.builder("humanoid").numEnvs(32).numThreads(2).build()) {
      pool.reset(0);
      AtomicBoolean stop = new AtomicBoolean();
      List<Throwable> otherErrors = Collections.synchronizedList(new ArrayList<>());
      int[] busy = new int[1];
      Thread other = new Thread(() -> {
        while (!stop.get()) {
          try {
            pool.step();
          } catch (JoltgymException e) {
            if (e.status() == JoltgymException.BUSY) {
              ++busy[0];
            } else {
              otherErrors.add(e);
            }
          } catch (Throwable t) {
            otherErrors.add(t);
          }
        }
      });
      other.start();
      int mine = 0;
      // Until the other thread has been turned away a few times (or 2000 steps: it always is long before).
      for (int t = 0; t < 2000; ++t) {
        try {
          pool.step();
        } catch (JoltgymException e) {
          assertEquals(JoltgymException.BUSY, e.status(), e.getMessage());
          ++mine;
        }
        if (t % 50 == 49) {
          synchronized (busy) {
            if (busy[0] + mine >= 3) break;
          }
        }
      }
      stop.set(true);
      other.join();
      assertEquals(List.of(), otherErrors);
      assertTrue(busy[0] + mine > 0, "neither thread was ever turned away");
      pool.step();  // the pool is fine afterwards
    }
  }

  @Test
  void differentPoolsOnDifferentThreadsAreFine() throws Exception {
    List<Throwable> errors = Collections.synchronizedList(new ArrayList<>());
    List<Thread> threads = new ArrayList<>();
    for (int k = 0; k < 3; ++k) {
      final int seed = k;
      threads.add(new Thread(() -> {
        try (Env env = Env.make("Swimmer-v5")) {
          env.reset(seed);
          for (int t = 0; t < 50; ++t) env.step(new float[2]);
        } catch (Throwable t) {
          errors.add(t);
        }
      }));
    }
    threads.forEach(Thread::start);
    for (Thread t : threads) t.join();
    assertEquals(List.of(), errors);
  }
}
