/*
 * DiscretizeGolden.java - write Weka's own discretisation of an ARFF file as a golden JSON file.
 *
 * Run as a single-file program (Java 11+), with the Weka jar on the class path:
 *
 *   java -cp weka-stable-3.8.6.jar tools/weka/DiscretizeGolden.java data.arff out.json [bins]
 *
 * The last attribute is the class. For every numeric non-class attribute the file records, for
 * three filters run with their defaults (except the number of bins):
 *
 *   "mdl"             weka.filters.supervised.attribute.Discretize (Fayyad & Irani MDL)
 *   "equal_width"     weka.filters.unsupervised.attribute.Discretize -B bins
 *   "equal_frequency" weka.filters.unsupervised.attribute.Discretize -B bins -F
 *
 * the cut points (exactly, as Double.toHexString, and readably, as Double.toString), the value
 * labels of the discretised attribute (verbatim, quotes included, as Weka 3.8 makes them), and the
 * code every row received: one character per row from CODE_ALPHABET, '?' for a missing value (a
 * JSON list of integers instead when an attribute has more codes than the alphabet).
 *
 * The test suite (tests/test_preprocess_golden.py) reads these files; it never needs Java.
 *
 * A second mode records how Weka prints numbers in bin labels (Utils.doubleToString(x, 6)) for a
 * seeded list of awkward numbers (ties at the seventh decimal, tiny, huge, negative):
 *
 *   java -cp weka.jar tools/weka/DiscretizeGolden.java --numbers out.json
 */

import weka.core.Attribute;
import weka.core.Instances;
import weka.core.Utils;
import weka.core.Version;
import weka.core.converters.ConverterUtils.DataSource;
import weka.filters.Filter;

import java.io.FileOutputStream;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;

public class DiscretizeGolden {

  static final String CODE_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz";

  public static void main(String[] args) throws Exception {
    if (args.length == 2 && args[0].equals("--numbers")) {
      numbers(args[1]);
      return;
    }
    if (args.length < 2 || args.length > 3) {
      System.err.println("usage: DiscretizeGolden <data.arff> <out.json> [bins (default 10)]");
      System.exit(2);
    }
    int bins = args.length == 3 ? Integer.parseInt(args[2]) : 10;
    Instances data = DataSource.read(args[0]);
    data.setClassIndex(data.numAttributes() - 1);

    weka.filters.supervised.attribute.Discretize mdl = new weka.filters.supervised.attribute.Discretize();
    mdl.setInputFormat(data);
    Instances mdlOut = Filter.useFilter(data, mdl);

    weka.filters.unsupervised.attribute.Discretize width = new weka.filters.unsupervised.attribute.Discretize();
    width.setBins(bins);
    width.setInputFormat(data);
    Instances widthOut = Filter.useFilter(data, width);

    weka.filters.unsupervised.attribute.Discretize freq = new weka.filters.unsupervised.attribute.Discretize();
    freq.setBins(bins);
    freq.setUseEqualFrequency(true);
    freq.setInputFormat(data);
    Instances freqOut = Filter.useFilter(data, freq);

    StringBuilder sb = new StringBuilder();
    sb.append("{\n");
    sb.append("  \"dataset\": ").append(quote(Paths.get(args[0]).getFileName().toString())).append(",\n");
    sb.append("  \"relation\": ").append(quote(data.relationName())).append(",\n");
    sb.append("  \"weka_version\": ").append(quote(Version.VERSION)).append(",\n");
    sb.append("  \"java_version\": ").append(quote(System.getProperty("java.version"))).append(",\n");
    sb.append("  \"class_attribute\": ").append(quote(data.classAttribute().name())).append(",\n");
    sb.append("  \"n_rows\": ").append(data.numInstances()).append(",\n");
    sb.append("  \"bins\": ").append(bins).append(",\n");
    sb.append("  \"options\": {\n");
    sb.append("    \"mdl\": ").append(quote(mdl.getClass().getName() + " " + Utils.joinOptions(mdl.getOptions()))).append(",\n");
    sb.append("    \"equal_width\": ").append(quote(width.getClass().getName() + " " + Utils.joinOptions(width.getOptions()))).append(",\n");
    sb.append("    \"equal_frequency\": ").append(quote(freq.getClass().getName() + " " + Utils.joinOptions(freq.getOptions()))).append("\n");
    sb.append("  },\n");
    sb.append("  \"code_alphabet\": ").append(quote(CODE_ALPHABET)).append(",\n");
    sb.append("  \"attributes\": [");
    boolean firstAtt = true;
    for (int i = 0; i < data.numAttributes(); i++) {
      if (i == data.classIndex() || !data.attribute(i).isNumeric()) {
        continue;
      }
      sb.append(firstAtt ? "\n" : ",\n");
      firstAtt = false;
      sb.append("    {\n");
      sb.append("      \"name\": ").append(quote(data.attribute(i).name())).append(",\n");
      sb.append("      \"index\": ").append(i).append(",\n");
      sb.append("      \"mdl\": ");
      method(sb, mdl.getCutPoints(i), mdlOut, i);
      sb.append(",\n      \"equal_width\": ");
      method(sb, width.getCutPoints(i), widthOut, i);
      sb.append(",\n      \"equal_frequency\": ");
      method(sb, freq.getCutPoints(i), freqOut, i);
      sb.append("\n    }");
    }
    sb.append("\n  ]\n}\n");

    try (Writer w = new OutputStreamWriter(new FileOutputStream(args[1]), StandardCharsets.UTF_8)) {
      w.write(sb.toString());
    }
  }

  /** Weka's label formatting of a seeded list of numbers, as [hex, Utils.doubleToString(x, 6)]. */
  static void numbers(String outPath) throws Exception {
    java.util.Random rnd = new java.util.Random(20240611L);
    java.util.List<Double> xs = new java.util.ArrayList<>();
    double[] specials = {0.0, -0.0, -1e-9, 2.0, 0.5, 5e-7, -5e-7, 2.5e-7, 1.5e-6, 4.5e-6, 1e-3, 0.0015,
      0.0000015, 1.0000005, 2.0000005, 0.1234565, 1e7, 12345678.1234565, 1e15, 123456789012.3456789, 1e-300};
    for (double x : specials) {
      xs.add(x);
    }
    for (int i = 0; i < 300; i++) {
      xs.add((rnd.nextInt(2000000000) - 1000000000) / 1e7);      // ties at the 7th decimal
      xs.add(rnd.nextInt(1000000) / 1e6 + 0.0000005);
      xs.add(rnd.nextGaussian() * Math.pow(10, rnd.nextInt(28) - 12));
      xs.add((rnd.nextInt(2000) + 0.5) / 1e6);
    }
    StringBuilder sb = new StringBuilder();
    sb.append("{\n  \"weka_version\": ").append(quote(Version.VERSION)).append(",\n");
    sb.append("  \"java_version\": ").append(quote(System.getProperty("java.version"))).append(",\n");
    sb.append("  \"function\": \"weka.core.Utils.doubleToString(x, 6)\",\n");
    sb.append("  \"numbers\": [");
    for (int i = 0; i < xs.size(); i++) {
      double x = xs.get(i);
      sb.append(i == 0 ? "\n    " : ",\n    ");
      sb.append("[").append(quote(Double.toHexString(x))).append(", ").append(quote(Utils.doubleToString(x, 6))).append("]");
    }
    sb.append("\n  ]\n}\n");
    try (Writer w = new OutputStreamWriter(new FileOutputStream(outPath), StandardCharsets.UTF_8)) {
      w.write(sb.toString());
    }
  }

  /** One method's result for attribute i: cut points, labels and per-row codes. */
  static void method(StringBuilder sb, double[] cuts, Instances out, int i) {
    if (cuts == null) {
      cuts = new double[0];
    }
    sb.append("{\n");
    sb.append("        \"cut_points_hex\": [");
    for (int j = 0; j < cuts.length; j++) {
      sb.append(j == 0 ? "" : ", ").append(quote(Double.toHexString(cuts[j])));
    }
    sb.append("],\n        \"cut_points\": [");
    for (int j = 0; j < cuts.length; j++) {
      sb.append(j == 0 ? "" : ", ").append(Double.toString(cuts[j]));
    }
    sb.append("],\n        \"labels\": [");
    Attribute att = out.attribute(i);
    for (int k = 0; k < att.numValues(); k++) {
      sb.append(k == 0 ? "" : ", ").append(quote(att.value(k)));
    }
    sb.append("],\n        \"codes\": ");
    if (att.numValues() <= CODE_ALPHABET.length()) {
      StringBuilder codes = new StringBuilder();
      for (int r = 0; r < out.numInstances(); r++) {
        codes.append(out.instance(r).isMissing(i) ? '?' : CODE_ALPHABET.charAt((int) out.instance(r).value(i)));
      }
      sb.append(quote(codes.toString()));
    } else {
      sb.append("[");
      for (int r = 0; r < out.numInstances(); r++) {
        sb.append(r == 0 ? "" : ",").append(out.instance(r).isMissing(i) ? -1 : (int) out.instance(r).value(i));
      }
      sb.append("]");
    }
    sb.append("\n      }");
  }

  /** A JSON string literal. */
  static String quote(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      switch (c) {
        case '"': b.append("\\\""); break;
        case '\\': b.append("\\\\"); break;
        case '\n': b.append("\\n"); break;
        case '\r': b.append("\\r"); break;
        case '\t': b.append("\\t"); break;
        default:
          if (c < 0x20) {
            b.append(String.format("\\u%04x", (int) c));
          } else {
            b.append(c);
          }
      }
    }
    return b.append('"').toString();
  }
}
