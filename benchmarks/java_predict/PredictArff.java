import java.io.BufferedOutputStream;
import java.io.DataOutputStream;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;

import weka.classifiers.bayes.hdpbnc.HDPModel;
import weka.classifiers.bayes.hdpbnc.InstanceCoder;
import weka.classifiers.bayes.hdpbnc.ModelFile;
import weka.core.Instances;
import weka.core.converters.ConverterUtils.DataSource;

/**
 * Seconds of the Weka package's pure-Java prediction of an ARFF file's rows with a model file, as
 * HDPBayesNet predicts: row by row (InstanceCoder.distribution: each row coded, every member its own cut
 * points, then the weighted mean of the members' distributions, as distributionForInstance does) and, where
 * the jar has it, in blocks of 256 rows (InstanceCoder.distributions, each block tree by tree, as
 * distributionsForInstances does for Weka's evaluation). The two ways alternate, pass by pass, after one
 * warm-up pass each; each keeps its shortest of PASSES timed passes. A block's probabilities must equal the
 * row-by-row ones exactly (else exit 1). Prints "ROWS rows SECONDS s" (row by row), then "batch SECONDS s"
 * or "batch unavailable", then "read SECONDS s first SECONDS s" (ModelFile.read: the shortest of PASSES
 * reads after the first, and the first, which a fresh Weka process pays), and writes the row-by-row
 * probabilities (model class order, little-endian float64, rows x classes) to OUT. Needs only
 * ModelFile.read and InstanceCoder.distribution, which every version of the package has, so it runs on the
 * jar of any checkout.
 *
 *   java -cp hdp-bnc-weka.jar:arrow-format.jar:flatbuffers-java.jar:weka.jar PredictArff.java MODEL ARFF OUT
 */
public class PredictArff {
  /** Timed passes of each way (after a warm-up pass each). */
  static final int PASSES = 2;
  /** Rows per block, as HDPBayesNet.PREDICTION_BLOCK. */
  static final int BLOCK = 256;

  public static void main(String[] args) throws Exception {
    long t0 = System.nanoTime();
    HDPModel model = ModelFile.read(Path.of(args[0])); // the first read, as a fresh Weka process reads a model
    double firstRead = (System.nanoTime() - t0) / 1e9;
    double read = Double.POSITIVE_INFINITY;
    for (int i = 0; i < PASSES; i++) {
      t0 = System.nanoTime();
      ModelFile.read(Path.of(args[0]));
      read = Math.min(read, (System.nanoTime() - t0) / 1e9);
    }
    Instances data = DataSource.read(args[1]);
    data.setClassIndex(data.numAttributes() - 1); // the last attribute, as hdp_plugin's readers take it
    InstanceCoder coder = new InstanceCoder(model, data);
    Method blocks = null;
    try {
      blocks = InstanceCoder.class.getMethod("distributions", Instances.class, int.class, int.class);
    } catch (NoSuchMethodException e) {
      // an older jar: row by row only
    }
    int rows = data.numInstances();
    double[][] proba = new double[rows][];
    double[][] batch = new double[rows][];
    double rowSeconds = Double.POSITIVE_INFINITY;
    double batchSeconds = Double.POSITIVE_INFINITY;
    for (int pass = 0; pass <= PASSES; pass++) {
      t0 = System.nanoTime();
      for (int r = 0; r < rows; r++) {
        proba[r] = coder.distribution(data.instance(r));
      }
      double seconds = (System.nanoTime() - t0) / 1e9;
      if (pass > 0) {
        rowSeconds = Math.min(rowSeconds, seconds);
      }
      if (blocks == null) {
        continue;
      }
      t0 = System.nanoTime();
      for (int from = 0; from < rows; from += BLOCK) {
        int to = Math.min(rows, from + BLOCK);
        double[][] p = (double[][]) blocks.invoke(coder, data, from, to);
        System.arraycopy(p, 0, batch, from, to - from);
      }
      seconds = (System.nanoTime() - t0) / 1e9;
      if (pass > 0) {
        batchSeconds = Math.min(batchSeconds, seconds);
      }
      for (int r = 0; r < rows; r++) {
        if (!Arrays.equals(proba[r], batch[r])) {
          System.err.println("row " + r + ": the block's probabilities differ from the row's");
          System.exit(1);
        }
      }
    }
    try (DataOutputStream out = new DataOutputStream(new BufferedOutputStream(Files.newOutputStream(Path.of(args[2])),
      1 << 20))) {
      for (double[] p : proba) {
        for (double v : p) {
          out.writeLong(Long.reverseBytes(Double.doubleToRawLongBits(v)));
        }
      }
    }
    System.out.printf(Locale.ROOT, "%d rows %.6f s%n", rows, rowSeconds);
    System.out.println(blocks == null ? "batch unavailable" : String.format(Locale.ROOT, "batch %.6f s", batchSeconds));
    System.out.printf(Locale.ROOT, "read %.6f s first %.6f s%n", read, firstRead);
  }
}
