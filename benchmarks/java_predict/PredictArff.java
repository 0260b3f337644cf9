import java.io.BufferedOutputStream;
import java.io.DataOutputStream;
import java.nio.file.Files;
import java.nio.file.Path;

import weka.classifiers.bayes.hdpbnc.HDPModel;
import weka.classifiers.bayes.hdpbnc.InstanceCoder;
import weka.classifiers.bayes.hdpbnc.ModelFile;
import weka.core.Instances;
import weka.core.converters.ConverterUtils.DataSource;

/**
 * Seconds of the Weka package's pure-Java prediction of an ARFF file's rows with a model file, as
 * HDPBayesNet predicts: each row coded by InstanceCoder (every member its own cut points), then the
 * weighted mean of the members' distributions. One pass warms the JIT, the second is timed. Prints one
 * line, "ROWS rows SECONDS s", and writes the timed pass's probabilities (model class order,
 * little-endian float64, rows x classes) to OUT. Uses only what every version of the package has
 * (ModelFile.read, InstanceCoder), so it runs on the jar of any checkout.
 *
 *   java -cp hdp-bnc-weka.jar:arrow-format.jar:flatbuffers-java.jar:weka.jar PredictArff.java MODEL ARFF OUT
 */
public class PredictArff {
  public static void main(String[] args) throws Exception {
    HDPModel model = ModelFile.read(Path.of(args[0]));
    Instances data = DataSource.read(args[1]);
    data.setClassIndex(data.numAttributes() - 1); // the last attribute, as hdp_plugin's readers take it
    InstanceCoder coder = new InstanceCoder(model, data);
    int rows = data.numInstances();
    double[][] proba = new double[rows][];
    double seconds = 0;
    for (int pass = 0; pass < 2; pass++) {
      long t0 = System.nanoTime();
      for (int r = 0; r < rows; r++) {
        proba[r] = coder.distribution(data.instance(r));
      }
      seconds = (System.nanoTime() - t0) / 1e9;
    }
    try (DataOutputStream out = new DataOutputStream(new BufferedOutputStream(Files.newOutputStream(Path.of(args[2])),
      1 << 20))) {
      for (double[] p : proba) {
        for (double v : p) {
          out.writeLong(Long.reverseBytes(Double.doubleToRawLongBits(v)));
        }
      }
    }
    System.out.printf("%d rows %.6f s%n", rows, seconds);
  }
}
