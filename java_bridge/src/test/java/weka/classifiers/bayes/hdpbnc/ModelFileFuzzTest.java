package weka.classifiers.bayes.hdpbnc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.util.Random;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import weka.core.Instances;

/**
 * The 4.0 reader under seeded edits of the golden model files, each with the checksum recomputed so that
 * the edit is what the reader judges: values of the node table (branches, children, back-off weights,
 * cell offsets, values and log-probabilities) set to neighbours, extremes, NaN and infinities, and bits
 * flipped anywhere in the file. Every edited file is either one ModelFileException naming the file (for a
 * node table edit, by a check of its own, never an exception of the code), or a model whose every
 * prediction of golden data rows and the edge rows is a distribution of finite numbers summing to one, that
 * describes and draws itself (unless a flipped bit renamed an attribute the data then lacks).
 */
class ModelFileFuzzTest {

  /** Edits per golden model. */
  static final int TRIALS = 300;
  /** Training rows predicted with each model that loads (and every edge row). */
  static final int ROWS = 40;

  static final int[] BUFFERS = {ModelBytes.BRANCH, ModelBytes.CHILDREN, ModelBytes.LOG_BACKOFF, ModelBytes.OFFSETS,
    ModelBytes.VALUE, ModelBytes.LOG_PROB};

  static java.util.stream.Stream<String> names() throws Exception {
    return GoldenModelsTest.names();
  }

  @ParameterizedTest
  @MethodSource("names")
  void editedFilesAreAnErrorOrAModelThatPredictsDistributions(String name) throws Exception {
    byte[] golden = Files.readAllBytes(TestFiles.golden().resolve(name + ".hdpbnc"));
    Instances data = GoldenModelsTest.data(name);
    data = new Instances(data, 0, Math.min(ROWS, data.numInstances()));
    Instances edge = GoldenModelsTest.data(name, "edge_data");
    int batches = new ArrowFileReader(golden).numBatches();
    Random r = new Random(name.hashCode());
    int loaded = 0;
    int refused = 0;
    for (int trial = 0; trial < TRIALS; trial++) {
      byte[] b = golden.clone();
      boolean nodes = r.nextInt(4) != 0;
      String what;
      if (nodes) {
        what = editNodes(b, r, batches);
      } else {
        int at = r.nextInt(b.length);
        b[at] ^= (byte) (1 << r.nextInt(8));
        what = "bit flipped at byte " + at;
      }
      try {
        b = ModelBytes.withChecksum(b);
      } catch (java.io.IOException e) {
        // not an Arrow file any more: judged as it is
      }
      HDPModel m;
      try {
        m = ModelFile.read(b, "m.hdpbnc");
      } catch (ModelFile.ModelFileException e) {
        refused++;
        String msg = e.getMessage();
        assertTrue(msg.startsWith("m.hdpbnc: ") && !msg.contains("\n"), what + ": " + msg);
        assertFalse(nodes && msg.contains("bad model metadata"), what + ": " + msg);
        continue;
      } catch (RuntimeException | StackOverflowError e) {
        throw new AssertionError(what + ": " + e, e);
      }
      loaded++;
      for (Instances rows : new Instances[] {data, edge}) {
        InstanceCoder coder;
        try {
          coder = new InstanceCoder(m, rows);
        } catch (IllegalArgumentException e) { // a flipped bit renamed an attribute: the data lacks it
          assertTrue(!nodes && e.getMessage().startsWith("the data lacks attribute(s)"), what + ": " + e);
          break;
        }
        for (int i = 0; i < rows.numInstances(); i++) {
          double[] p = coder.distribution(rows.instance(i));
          double sum = 0;
          for (double v : p) {
            assertTrue(Double.isFinite(v) && v >= 0 && v <= 1, what + ", row " + i + ": " + java.util.Arrays.toString(p));
            sum += v;
          }
          assertEquals(1.0, sum, 1e-9, what + ", row " + i);
        }
      }
      assertTrue(m.describe().contains("Structure: "), what);
      assertTrue(NetworkDrawing.toXMLBIF(m, "fuzz").contains("<BIF VERSION=\"0.3\">"), what);
    }
    assertTrue(refused > TRIALS / 4 && loaded > 0, name + ": " + refused + " refused, " + loaded + " loaded");
  }

  /** One or two edits of node table values in place; returns what was edited. */
  private static String editNodes(byte[] b, Random r, int batches) throws Exception {
    StringBuilder what = new StringBuilder();
    int edits = 1 + r.nextInt(2);
    for (int e = 0; e < edits; e++) {
      int batch = r.nextInt(batches);
      int buffer = BUFFERS[r.nextInt(BUFFERS.length)];
      int count = ModelBytes.count(b, batch, buffer);
      if (count == 0) {
        continue;
      }
      int i = r.nextInt(count);
      what.append(String.format("batch %d buffer %d value %d ", batch, buffer, i));
      if (buffer == ModelBytes.LOG_BACKOFF || buffer == ModelBytes.LOG_PROB) {
        double old = ModelBytes.getDouble(b, batch, buffer, i);
        double[] choices = {Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, 0.0, -0.0, 1e-300, 0.5,
          -1e-300, old + 1e-9, old - 1e-9, old * (1 + 1e-12), old - 1, -old, 2 * old, Double.MAX_VALUE, -Double.MAX_VALUE,
          Double.longBitsToDouble(r.nextLong())};
        double v = choices[r.nextInt(choices.length)];
        ModelBytes.setDouble(b, batch, buffer, i, v);
        what.append(old).append(" -> ").append(v).append("; ");
      } else {
        int old = ModelBytes.getInt(b, batch, buffer, i);
        int[] choices = {old - 1, old + 1, old - 2, old + 2, 0, 1, 65535, 65536, -1, Integer.MAX_VALUE,
          Integer.MIN_VALUE, r.nextInt(), r.nextInt(8)};
        int v = choices[r.nextInt(choices.length)];
        ModelBytes.setInt(b, batch, buffer, i, v);
        what.append(old).append(" -> ").append(v).append("; ");
      }
    }
    return what.toString();
  }
}
