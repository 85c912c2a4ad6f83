package joltgym.ars;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * ARS's policy: a = clip(W ((x - mean) * invStd), low, high), rounded to
 * float32; low and high may be infinite (no clipping: the env's control cost
 * is paid on the action as computed, and MuJoCo clamps the controls). Every
 * sum runs in double over k in order (no fused multiply-add: Java never
 * fuses), the order examples/evaluate.py replays it in, so a replay in
 * Python gets the same actions bit for bit.
 */
public final class LinearPolicy {
  /** The policy file's format tag (examples/evaluate.py checks it). */
  public static final String FORMAT = "joltgym_marl.ars_linear/1";

  final int obsDim;
  final int actDim;
  final double[][] weights;  // [actDim][obsDim]
  final double[] mean;
  final double[] invStd;
  final double[] low;
  final double[] high;

  public LinearPolicy(double[][] weights, double[] mean, double[] invStd, double[] low,
      double[] high) {
    this.actDim = weights.length;
    this.obsDim = mean.length;
    this.weights = weights;
    this.mean = mean;
    this.invStd = invStd;
    this.low = low;
    this.high = high;
  }

  /** The action for observation row `obs[base .. base + obsDim)`, written into out[outBase ..]. */
  public void act(double[][] w, double[] obs, int base, float[] out, int outBase) {
    for (int j = 0; j < actDim; ++j) {
      double acc = 0.0;
      double[] wj = w[j];
      for (int k = 0; k < obsDim; ++k) acc += wj[k] * ((obs[base + k] - mean[k]) * invStd[k]);
      if (acc < low[j]) acc = low[j];
      if (acc > high[j]) acc = high[j];
      out[outBase + j] = (float) acc;
    }
  }

  /** The same with this policy's own weights. */
  public void act(double[] obs, int base, float[] out, int outBase) {
    act(weights, obs, base, out, outBase);
  }

  /** Writes the policy as JSON (examples/evaluate.py POLICY.json replays it). */
  public void save(Path path, String task, String envId, String about) throws IOException {
    StringBuilder sb = new StringBuilder();
    sb.append("{\n  \"format\": \"").append(FORMAT).append("\",\n");
    sb.append("  \"task\": \"").append(task).append("\",\n");
    sb.append("  \"env_id\": \"").append(envId).append("\",\n");
    sb.append("  \"about\": \"").append(about.replace("\\", "\\\\").replace("\"", "'")).append("\",\n");
    sb.append("  \"obs_dim\": ").append(obsDim).append(",\n");
    sb.append("  \"act_dim\": ").append(actDim).append(",\n");
    sb.append("  \"weights\": [");
    for (int j = 0; j < actDim; ++j) {
      sb.append(j > 0 ? ",\n    " : "\n    ");
      array(sb, weights[j]);
    }
    sb.append("\n  ],\n  \"mean\": ");
    array(sb, mean);
    sb.append(",\n  \"inv_std\": ");
    array(sb, invStd);
    // No clipping is null (JSON has no infinities); evaluate.py then passes
    // the actions on unclipped, as the trainer did.
    sb.append(",\n  \"action_low\": ");
    bound(sb, low);
    sb.append(",\n  \"action_high\": ");
    bound(sb, high);
    sb.append("\n}\n");
    Files.writeString(path, sb.toString(), StandardCharsets.UTF_8);
  }

  private static void bound(StringBuilder sb, double[] values) {
    for (double v : values) {
      if (!Double.isInfinite(v)) {
        array(sb, values);
        return;
      }
    }
    sb.append("null");
  }

  private static void array(StringBuilder sb, double[] values) {
    sb.append('[');
    for (int i = 0; i < values.length; ++i) {
      if (i > 0) sb.append(", ");
      // Double.toString round-trips exactly: Python's float() reads the same double.
      sb.append(Double.toString(values[i]));
    }
    sb.append(']');
  }
}
