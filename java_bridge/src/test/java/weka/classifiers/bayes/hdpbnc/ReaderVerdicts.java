package weka.classifiers.bayes.hdpbnc;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import weka.core.Instances;
import weka.core.converters.ConverterUtils.DataSource;

/**
 * What this package's reader makes of model files, for tests/test_readers_agree.py, which compares it with
 * what hdp_plugin's reader makes of them: per line of standard input ({@code MODEL<TAB>DATA<TAB>CLASS}: a
 * model file, an ARFF file and its class attribute), one line of JSON on standard output: {@code verdict}
 * {@code refuse} with the reader's {@code message}, or {@code accept} with the class labels and, for every
 * row of the data, the class probabilities ({@code proba}), or the one-line reason the data cannot be
 * coded ({@code unusable}). An exception other than the reader's own is a {@code crash}, with its text.
 */
public final class ReaderVerdicts {

  private ReaderVerdicts() {
  }

  /**
   * Reads the lines of standard input and answers each.
   *
   * @param args unused
   * @throws Exception on input or output failures
   */
  public static void main(String[] args) throws Exception {
    PrintStream out = new PrintStream(System.out, true, "UTF-8");
    Map<String, Instances> datasets = new HashMap<>();
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line = in.readLine(); line != null; line = in.readLine()) {
      if (line.isEmpty()) {
        continue;
      }
      String[] f = line.split("\t", -1);
      Instances data = datasets.get(f[1] + "\t" + f[2]);
      if (data == null) {
        data = DataSource.read(f[1]);
        data.setClass(data.attribute(f[2]));
        datasets.put(f[1] + "\t" + f[2], data);
      }
      out.println(Json.write(verdict(f[0], data)));
    }
  }

  /** The verdict on one model file, and its predictions of the data's rows. */
  static Map<String, Object> verdict(String model, Instances data) {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("model", model);
    HDPModel m;
    try {
      m = ModelFile.read(Paths.get(model));
    } catch (ModelFile.ModelFileException e) {
      out.put("verdict", "refuse");
      out.put("message", e.getMessage());
      return out;
    } catch (RuntimeException | Error e) {
      out.put("verdict", "crash");
      out.put("message", "reading: " + e);
      return out;
    }
    out.put("verdict", "accept");
    out.put("classes", java.util.Arrays.asList(m.classValues()));
    try {
      m.describe();
      out.put("drawing_chars", NetworkDrawing.toXMLBIF(m, "model").length());
    } catch (NetworkDrawing.TooLargeToDraw e) {
      out.put("drawing", e.getMessage()); // a network too large to draw says so: not a crash
    } catch (RuntimeException | Error e) {
      out.put("verdict", "crash");
      out.put("message", "describing: " + e);
      return out;
    }
    InstanceCoder coder;
    try {
      coder = new InstanceCoder(m, data);
    } catch (IllegalArgumentException e) {
      out.put("unusable", e.getMessage());
      return out;
    }
    try {
      List<Object> rows = new ArrayList<>();
      for (double[] p : coder.distributions(data, 0, data.numInstances())) {
        List<Object> row = new ArrayList<>();
        for (double v : p) {
          row.add(Double.isFinite(v) ? (Object) v : String.valueOf(v));
        }
        rows.add(row);
      }
      out.put("proba", rows);
    } catch (RuntimeException | Error e) {
      out.put("verdict", "crash");
      out.put("message", "predicting: " + e);
    }
    return out;
  }
}
