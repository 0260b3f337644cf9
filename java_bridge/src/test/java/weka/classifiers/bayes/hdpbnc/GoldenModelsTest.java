package weka.classifiers.bayes.hdpbnc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import weka.core.Instances;
import weka.core.converters.ConverterUtils.DataSource;

/**
 * The golden model files that Python wrote (tests/golden/models, see make_golden.py): the Java
 * reader and prediction give Python's probabilities for every row, and for the edge rows, to 1e-12.
 */
class GoldenModelsTest {

  static Stream<String> names() throws IOException {
    return ModelFile.asMap(Json.parse(read(TestFiles.golden().resolve("manifest.json")))).keySet().stream();
  }

  static String read(Path p) throws IOException {
    return new String(Files.readAllBytes(p), StandardCharsets.UTF_8);
  }

  /** The golden data set with its class set, and the model. */
  static Instances data(String name) throws Exception {
    return data(name, "data");
  }

  /** A golden data set of the manifest entry ({@code data} or {@code edge_data}), class set. */
  static Instances data(String name, String key) throws Exception {
    Map<String, Object> entry = ModelFile.asMap(ModelFile.asMap(
      Json.parse(read(TestFiles.golden().resolve("manifest.json")))).get(name));
    Instances data = DataSource.read(TestFiles.repo().resolve((String) entry.get(key)).toString());
    data.setClass(data.attribute((String) entry.get("class")));
    return data;
  }

  @ParameterizedTest
  @MethodSource("names")
  void probabilitiesMatchPython(String name) throws Exception {
    check(name, data(name), name + ".proba.csv");
  }

  /**
   * The node table as the reader hands it out: the temperature tree of the worked example
   * (docs/model-format.md section 7), its branches, children, back-off weights and cells.
   */
  @org.junit.jupiter.api.Test
  void theNodeTableIsReadAsTheDocumentShowsIt() throws Exception {
    byte[] bytes = Files.readAllBytes(TestFiles.golden().resolve("weather-kdb1-hdp.hdpbnc"));
    ArrowFileReader reader = new ArrowFileReader(bytes);
    List<String> columns = new java.util.ArrayList<>();
    reader.fields().forEach(f -> columns.add(f.toString()));
    assertEquals(ModelFile.NARROW_COLUMNS, columns);
    List<ArrowFileReader.Column> tree1 = reader.readBatch(1, true);
    assertArrayEquals(new int[] {0, 0, 1, 0, 1, 2, 0, 2}, (int[]) tree1.get(0).values);
    assertArrayEquals(new int[] {2, 3, 2, 0, 0, 0, 0, 0}, (int[]) tree1.get(1).values);
    assertEquals(-0.784905, ((double[]) tree1.get(2).values)[3], 1e-6);
    ArrowFileReader.Column cells = tree1.get(3);
    assertArrayEquals(new int[] {0, 3, 6, 9, 11, 14, 16, 18, 20}, cells.offsets);
    ArrowFileReader.Column value = cells.children.get(0).children.get(0);
    ArrowFileReader.Column logProb = cells.children.get(0).children.get(1);
    assertEquals(20, value.length);
    assertArrayEquals(new int[] {1, 2}, java.util.Arrays.copyOfRange((int[]) value.values, 9, 11));
    assertEquals(-1.261667, ((double[]) logProb.values)[0], 1e-6);
    assertEquals(-0.936942, ((double[]) logProb.values)[19], 1e-6);
    List<ArrowFileReader.Column> lazy = reader.readBatch(1, false);
    assertArrayEquals((double[]) logProb.values,
      (double[]) ArrowFileReader.values(lazy.get(3).children.get(0).children.get(1)), 0.0);
    assertArrayEquals((int[]) value.values, (int[]) ArrowFileReader.values(lazy.get(3).children.get(0).children.get(0)));
  }

  /**
   * The worked example of docs/model-format.md section 7: (sunny, hot, high, FALSE) for play = yes
   * reaches node 3 of the temperature tree, which has no cell for hot and backs off to its parent.
   */
  @org.junit.jupiter.api.Test
  void theWorkedExampleBacksOffAsTheDocumentSays() throws Exception {
    HDPModel model = ModelFile.read(TestFiles.golden().resolve("weather-kdb1-hdp.hdpbnc"));
    HDPModel.Network net = model.member(0);
    int[] codes = {0, 0, 0, 1};
    assertEquals(3, net.deepestNode(1, 0, codes) - net.m_TreeNodeStart[1]);
    assertEquals(-0.784905 - 1.690214, net.logEstimate(net.deepestNode(1, 0, codes), 0, 3), 1e-6);
    assertEquals(-0.620622, net.logEstimate(net.deepestNode(1, 1, codes), 0, 3), 1e-6);
    assertEquals(-7.303184, net.logJoint(codes)[0], 1e-6);
    assertEquals(-2.808668, net.logJoint(codes)[1], 1e-6);
    assertEquals(0.011047, model.distribution(new int[][] {codes})[0], 1e-6);
    assertEquals(8, net.m_TreeNodeStart[2] - net.m_TreeNodeStart[1]);
  }

  /** Missing values, labels unseen in training, values on (every member's) cut points, far values. */
  @ParameterizedTest
  @MethodSource("names")
  void edgeRowProbabilitiesMatchPython(String name) throws Exception {
    check(name, data(name, "edge_data"), name + ".edge.proba.csv");
  }

  @org.junit.jupiter.api.Test
  void anEnsembleDescribesItselfAndDrawsMember0() throws Exception {
    HDPModel model = ModelFile.read(TestFiles.golden().resolve("diabetes-eskdb-hdp.hdpbnc"));
    assertEquals(3, model.numMembers());
    assertTrue(model.describe().startsWith("ESKDB ensemble of 3 members"), model.describe());
    assertTrue(model.describe().contains("Member 0 (the network below and in the graph view)"));
    // the seed as the user gave it (random_state 3), not member 0's SeedSequence {entropy=..., spawn_key=[...]}
    assertTrue(model.describe().contains("tying level, seed 3)"), model.describe());
    assertFalse(model.describe().contains("entropy"), model.describe());
    String bif = NetworkDrawing.toXMLBIF(model, "diabetes");
    assertTrue(bif.contains("<NAME>diabetes (ESKDB: member 0 of 3, the ensemble averages them all)</NAME>"), bif);
    // the model's cells are its members'
    assertEquals((long) model.member(0).numCells() + model.member(1).numCells() + model.member(2).numCells(),
      model.numCells());
    assertTrue(model.member(0).numCells() != model.member(1).numCells());
    HDPModel single = ModelFile.read(TestFiles.golden().resolve("vote-kdb2-hdp.hdpbnc"));
    assertEquals(1, single.numMembers());
    // 16 attributes of long names: the drawing shows a part of the network, and says so
    assertTrue(NetworkDrawing.toXMLBIF(single, "vote").contains("<NAME>vote; drawn: the class and "), NetworkDrawing.toXMLBIF(single, "vote"));
  }

  /**
   * A model trained from a CSV with its integer codes declared categorical (labels "1", "2", ...): Weka's
   * CSV loader reads the codes as numbers, which match the labels by number; nominal labels "1.0",
   * "2.0", ... are not training labels but read as the same numbers, and match too.
   */
  @org.junit.jupiter.api.Test
  void integerCodesMatchAsNumbersAndAsLabelsOfTheSameNumber() throws Exception {
    String name = "breast-coded-kdb2-hdp";
    HDPModel model = ModelFile.read(TestFiles.golden().resolve(name + ".hdpbnc"));
    Instances numeric = data(name);
    assertTrue(numeric.attribute("tumor-size").isNumeric());
    java.util.ArrayList<weka.core.Attribute> atts = new java.util.ArrayList<>();
    java.util.List<String> labels = new java.util.ArrayList<>();
    for (int v = 1; v <= 20; v++) {
      labels.add(v + ".0");
    }
    for (int a = 0; a < numeric.numAttributes(); a++) {
      weka.core.Attribute att = numeric.attribute(a);
      atts.add(a == numeric.classIndex() ? (weka.core.Attribute) att.copy() : new weka.core.Attribute(att.name(), labels));
    }
    Instances nominal = new Instances("coded", atts, numeric.numInstances());
    nominal.setClassIndex(numeric.classIndex());
    for (int i = 0; i < numeric.numInstances(); i++) {
      double[] vals = numeric.instance(i).toDoubleArray();
      for (int a = 0; a < vals.length; a++) {
        if (a != numeric.classIndex() && !weka.core.Utils.isMissingValue(vals[a])) {
          vals[a] -= 1; // the code v is the label "v.0", index v - 1
        }
      }
      nominal.add(new weka.core.DenseInstance(1.0, vals));
    }
    InstanceCoder byNumber = new InstanceCoder(model, numeric);
    InstanceCoder byLabel = new InstanceCoder(model, nominal);
    for (int i = 0; i < numeric.numInstances(); i++) {
      assertArrayEquals(byNumber.distribution(numeric.instance(i)), byLabel.distribution(nominal.instance(i)), 0.0,
        "row " + i);
    }
  }

  private static void check(String name, Instances data, String probaFile) throws Exception {
    HDPModel model = ModelFile.read(TestFiles.golden().resolve(name + ".hdpbnc"));
    InstanceCoder coder = new InstanceCoder(model, data);
    List<String> lines = Files.readAllLines(TestFiles.golden().resolve(probaFile));
    String[] head = lines.get(0).split(",");
    assertEquals(model.numClasses() + 1, head.length);
    for (int y = 0; y < model.numClasses(); y++) {
      assertEquals("p_" + model.classValues()[y], head[y + 1]);
    }
    assertEquals(data.numInstances(), lines.size() - 1);
    double worst = 0;
    for (int i = 0; i < data.numInstances(); i++) {
      String[] f = lines.get(i + 1).split(",");
      double[] expected = new double[model.numClasses()];
      for (int y = 0; y < expected.length; y++) {
        expected[y] = Double.parseDouble(f[y + 1]);
      }
      double[] got = coder.distribution(data.instance(i));
      assertArrayEquals(expected, got, 1e-9, name + " row " + i);
      for (int y = 0; y < expected.length; y++) {
        worst = Math.max(worst, Math.abs(expected[y] - got[y]));
      }
    }
    assertTrue(worst < 1e-12, name + ": largest difference " + worst);
    // blocks of rows predicted tree by tree (Weka's batch prediction): every row exactly its own prediction
    for (int from = 0; from < data.numInstances(); from += 100) {
      int to = Math.min(data.numInstances(), from + 100);
      double[][] block = coder.distributions(data, from, to);
      assertEquals(to - from, block.length);
      for (int i = from; i < to; i++) {
        assertArrayEquals(coder.distribution(data.instance(i)), block[i - from], 0.0, name + " block row " + i);
      }
    }
  }
}
