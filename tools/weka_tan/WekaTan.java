/*
 * The TAN tree Weka itself learns, as a golden JSON file for hdp_plugin's tests.
 *
 *   java -cp weka-stable-3.8.6.jar WekaTan.java data.arff out.json
 *
 * (a single-file program: Java 11+ compiles and runs it in one step; make_golden.sh finds
 * the jar.) The class is the last attribute; every attribute must be nominal.
 *
 * Apples to apples with hdp_plugin:
 *  - missing values: hdp_plugin treats "?" as one more value of its attribute, while Weka's
 *    BayesNet would replace it (ReplaceMissingValues). So every "?" is first rewritten as an
 *    explicit extra nominal value, "__missing__", appended last as hdp_plugin's missing code
 *    is; Weka then sees no missing value. Rows with a missing class are dropped, as in
 *    hdp_plugin.
 *  - edge weights: Weka's TAN weighs an edge by score(head | class, tail) - score(head | class).
 *    With the ENTROPY score (the log-likelihood) that is exactly N * CMI(head; tail | class),
 *    the weight hdp_plugin uses. The default BAYES score is a different, asymmetric weight;
 *    its tree is recorded too ("edges_bayes_score"), for information only.
 */

import java.io.BufferedReader;
import java.io.FileReader;
import java.io.FileWriter;
import java.io.Reader;
import java.io.Writer;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

import weka.classifiers.bayes.BayesNet;
import weka.classifiers.bayes.net.ParentSet;
import weka.core.Attribute;
import weka.core.DenseInstance;
import weka.core.Instance;
import weka.core.Instances;
import weka.core.Utils;
import weka.core.Version;

public class WekaTan {

  static final String MISSING = "__missing__";
  static final String OPTIONS = "-Q weka.classifiers.bayes.net.search.local.TAN -- -S ";

  public static void main(String[] args) throws Exception {
    if (args.length != 2) {
      System.err.println("usage: java -cp weka.jar WekaTan.java data.arff out.json");
      System.exit(2);
    }
    Instances raw;
    try (Reader r = new BufferedReader(new FileReader(args[0]))) {
      raw = new Instances(r); // the plain ARFF reader: needs no jar beyond weka-stable
    }
    raw.setClassIndex(raw.numAttributes() - 1);
    Instances data = missingAsValue(raw);

    TreeSet<String> entropy = tanEdges(data, "ENTROPY");
    TreeSet<String> bayes = tanEdges(data, "BAYES");

    StringBuilder js = new StringBuilder();
    js.append("{\n");
    js.append("  \"dataset\": ").append(q(new java.io.File(args[0]).getName())).append(",\n");
    js.append("  \"relation\": ").append(q(raw.relationName())).append(",\n");
    js.append("  \"weka_version\": ").append(q(Version.VERSION)).append(",\n");
    js.append("  \"classifier\": ").append(q("weka.classifiers.bayes.BayesNet " + OPTIONS + "ENTROPY")).append(",\n");
    js.append("  \"missing\": ").append(q("every '?' rewritten as an extra last nominal value '" + MISSING
        + "' before Weka sees the data (hdp_plugin's missing-as-a-value); rows with a missing class dropped")).append(",\n");
    js.append("  \"rows\": ").append(data.numInstances()).append(",\n");
    js.append("  \"class\": ").append(q(data.classAttribute().name())).append(",\n");
    js.append("  \"attributes\": [");
    boolean first = true;
    for (int i = 0; i < data.numAttributes(); i++) {
      if (i == data.classIndex()) continue;
      js.append(first ? "" : ", ").append(q(data.attribute(i).name()));
      first = false;
    }
    js.append("],\n");
    js.append("  \"edges\": ").append(edgeList(entropy)).append(",\n");
    js.append("  \"edges_bayes_score\": ").append(edgeList(bayes)).append("\n");
    js.append("}\n");
    try (Writer w = new FileWriter(args[1])) {
      w.write(js.toString());
    }
  }

  /** The undirected attribute-attribute edges of Weka's TAN, as "a\tb" with a < b by name order. */
  static TreeSet<String> tanEdges(Instances data, String score) throws Exception {
    BayesNet bn = new BayesNet();
    bn.setOptions(Utils.splitOptions(OPTIONS + score));
    bn.buildClassifier(data);
    TreeSet<String> edges = new TreeSet<>();
    int cls = data.classIndex();
    for (int i = 0; i < data.numAttributes(); i++) {
      if (i == cls) continue;
      ParentSet ps = bn.getParentSet(i);
      for (int p = 0; p < ps.getNrOfParents(); p++) {
        int j = ps.getParent(p);
        if (j == cls) continue;
        String a = data.attribute(i).name(), b = data.attribute(j).name();
        edges.add(a.compareTo(b) < 0 ? a + "\t" + b : b + "\t" + a);
      }
    }
    return edges;
  }

  /** A copy where each non-class attribute has an extra last value standing for "missing". */
  static Instances missingAsValue(Instances raw) {
    ArrayList<Attribute> atts = new ArrayList<>();
    for (int i = 0; i < raw.numAttributes(); i++) {
      Attribute a = raw.attribute(i);
      if (!a.isNominal()) {
        throw new IllegalArgumentException("attribute " + a.name() + " is not nominal");
      }
      List<String> values = new ArrayList<>();
      for (int v = 0; v < a.numValues(); v++) values.add(a.value(v));
      if (i != raw.classIndex()) values.add(MISSING);
      atts.add(new Attribute(a.name(), values));
    }
    Instances out = new Instances(raw.relationName(), atts, raw.numInstances());
    out.setClassIndex(raw.classIndex());
    for (Instance inst : raw) {
      if (inst.classIsMissing()) continue;
      double[] vals = new double[raw.numAttributes()];
      for (int i = 0; i < raw.numAttributes(); i++) {
        vals[i] = inst.isMissing(i) ? raw.attribute(i).numValues() : inst.value(i);
      }
      out.add(new DenseInstance(1.0, vals));
    }
    return out;
  }

  static String edgeList(TreeSet<String> edges) {
    StringBuilder sb = new StringBuilder("[");
    boolean first = true;
    for (String e : edges) {
      String[] ab = e.split("\t");
      sb.append(first ? "\n    " : ",\n    ").append("[").append(q(ab[0])).append(", ").append(q(ab[1])).append("]");
      first = false;
    }
    return sb.append("\n  ]").toString();
  }

  static String q(String s) {
    StringBuilder sb = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      if (c == '"' || c == '\\') sb.append('\\').append(c);
      else if (c < 0x20) sb.append(String.format("\\u%04x", (int) c));
      else sb.append(c);
    }
    return sb.append('"').toString();
  }
}
