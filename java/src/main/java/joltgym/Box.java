package joltgym;

import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * Gymnasium's {@code spaces.Box}: a shape, per-element bounds (infinite where
 * unbounded) and a dtype ({@code "float32"} or {@code "float64"}).
 * {@link #sample()} draws as Gymnasium does: uniform where both bounds are
 * finite, normal where neither is, shifted exponential where one is.
 */
public final class Box {
  private final int[] shape;
  private final double[] low;
  private final double[] high;
  private final String dtype;
  private SplittableRandom random = new SplittableRandom();

  public Box(int[] shape, double[] low, double[] high, String dtype) {
    int size = 1;
    for (int n : shape) size *= n;
    if (low.length != size || high.length != size) {
      throw new IllegalArgumentException("low and high should hold " + size + " values each, got "
          + low.length + " and " + high.length);
    }
    this.shape = shape.clone();
    this.low = low.clone();
    this.high = high.clone();
    this.dtype = dtype;
  }

  /** A box of one bound everywhere. */
  public static Box of(int[] shape, double low, double high, String dtype) {
    int size = 1;
    for (int n : shape) size *= n;
    double[] l = new double[size];
    double[] h = new double[size];
    Arrays.fill(l, low);
    Arrays.fill(h, high);
    return new Box(shape, l, h, dtype);
  }

  public int[] shape() {
    return shape.clone();
  }

  /** The number of elements (the product of the shape). */
  public int size() {
    return low.length;
  }

  public double[] low() {
    return low.clone();
  }

  public double[] high() {
    return high.clone();
  }

  public String dtype() {
    return dtype;
  }

  /** Seeds {@link #sample()}'s generator. */
  public void seed(long seed) {
    random = new SplittableRandom(seed);
  }

  /** A random element, as a double array (see the class comment for the distributions). */
  public double[] sample() {
    double[] out = new double[low.length];
    for (int i = 0; i < out.length; ++i) {
      boolean lo = Double.isFinite(low[i]);
      boolean hi = Double.isFinite(high[i]);
      if (lo && hi) {
        out[i] = low[i] + (high[i] - low[i]) * random.nextDouble();
      } else if (!lo && !hi) {
        out[i] = gaussian();
      } else if (lo) {
        out[i] = low[i] - Math.log1p(-random.nextDouble());
      } else {
        out[i] = high[i] + Math.log1p(-random.nextDouble());
      }
      if ("float32".equals(dtype)) {
        out[i] = Math.min(Math.max((float) out[i], low[i]), high[i]);
      }
    }
    return out;
  }

  /** {@link #sample()} as float32 values (an action). */
  public float[] sampleFloats() {
    double[] d = sample();
    float[] f = new float[d.length];
    for (int i = 0; i < d.length; ++i) f[i] = (float) d[i];
    return f;
  }

  /** Whether x has this box's size and lies within its bounds. */
  public boolean contains(double[] x) {
    if (x.length != low.length) return false;
    for (int i = 0; i < x.length; ++i) {
      if (!(x[i] >= low[i] && x[i] <= high[i])) return false;
    }
    return true;
  }

  /** Whether x has this box's size and lies within its bounds. */
  public boolean contains(float[] x) {
    if (x.length != low.length) return false;
    for (int i = 0; i < x.length; ++i) {
      if (!(x[i] >= low[i] && x[i] <= high[i])) return false;
    }
    return true;
  }

  private double gaussian() {
    // Box-Muller (SplittableRandom has no nextGaussian on JDK 17).
    double u = 1.0 - random.nextDouble();
    double v = random.nextDouble();
    return Math.sqrt(-2.0 * Math.log(u)) * Math.cos(2.0 * Math.PI * v);
  }

  @Override
  public String toString() {
    return "Box(" + Arrays.toString(shape) + ", " + dtype + ")";
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Box b && Arrays.equals(shape, b.shape) && Arrays.equals(low, b.low)
        && Arrays.equals(high, b.high) && dtype.equals(b.dtype);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(shape) * 31 + dtype.hashCode();
  }
}
