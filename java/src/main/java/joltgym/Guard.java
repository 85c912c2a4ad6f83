package joltgym;

import java.util.concurrent.atomic.AtomicReference;

/**
 * One thread at a time inside an object, and nothing after close: a second
 * thread gets a JG_ERR_BUSY exception at once (never a wait, never a crash),
 * a closed object a JG_ERR_STATE one. The C API checks the same for its
 * pools; this guard also covers the Java state around them (the staged
 * actions, the episode flags).
 */
final class Guard {
  private static final Thread CLOSED = new Thread("closed");
  private final AtomicReference<Thread> owner = new AtomicReference<>();
  private final String what;

  Guard(String what) {
    this.what = what;
  }

  void enter() {
    Thread me = Thread.currentThread();
    if (!owner.compareAndSet(null, me)) {
      Thread other = owner.get();
      if (other == CLOSED) {
        throw new JoltgymException(JoltgymException.STATE, what + " is closed");
      }
      throw new JoltgymException(JoltgymException.BUSY, what + " is in use by another thread ("
          + (other == null ? "just released" : other.getName())
          + "): use one object per thread");
    }
  }

  void exit() {
    owner.compareAndSet(Thread.currentThread(), null);
  }

  /** Marks the object closed; false if it already was. Waits for no one: the caller holds it. */
  boolean closeHeld() {
    return owner.compareAndSet(Thread.currentThread(), CLOSED);
  }

  boolean isClosed() {
    return owner.get() == CLOSED;
  }
}
