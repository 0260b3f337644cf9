import java.io.DataInputStream;
import java.io.BufferedInputStream;
import java.nio.file.Files;
import java.nio.file.Path;

import weka.classifiers.bayes.hdpbnc.HDPModel;
import weka.classifiers.bayes.hdpbnc.ModelFile;

/**
 * Rows per second of the Weka package's pure-Java prediction (a network's distribution) on a
 * one-network model file and a matrix of attribute codes (little-endian int32, rows x attributes,
 * after an int32 pair rows, attributes). Prints one line: rows, seconds, rows per second, and a checksum.
 *
 *   java -cp hdp-bnc-weka.jar:arrow-format.jar:flatbuffers-java.jar:weka.jar PredictBench.java MODEL CODES
 */
public class PredictBench {
  public static void main(String[] args) throws Exception {
    HDPModel model = ModelFile.read(Path.of(args[0]));
    int rows, cols;
    int[] flat;
    try (DataInputStream in = new DataInputStream(new BufferedInputStream(Files.newInputStream(Path.of(args[1])), 1 << 20))) {
      rows = Integer.reverseBytes(in.readInt());
      cols = Integer.reverseBytes(in.readInt());
      flat = new int[rows * cols];
      for (int i = 0; i < flat.length; i++) {
        flat[i] = Integer.reverseBytes(in.readInt());
      }
    }
    int[] row = new int[cols];
    double checksum = 0;
    for (int pass = 0; pass < 2; pass++) { // the first pass warms the JIT
      long t0 = System.nanoTime();
      checksum = 0;
      for (int r = 0; r < rows; r++) {
        System.arraycopy(flat, r * cols, row, 0, cols);
        checksum += model.member(0).distribution(row)[0];
      }
      double s = (System.nanoTime() - t0) / 1e9;
      if (pass == 1) {
        System.out.printf("%d rows %.3f s %.0f rows/s checksum %.6f%n", rows, s, rows / s, checksum);
      }
    }
  }
}
