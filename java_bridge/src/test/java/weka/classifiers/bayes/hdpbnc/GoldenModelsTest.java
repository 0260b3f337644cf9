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
 * reader and prediction give Python's probabilities for every row to 1e-9.
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

  /** The same models as format 1.0 and 2.0 files (the cell table), which this reader keeps reading. */
  @ParameterizedTest
  @MethodSource("names")
  void legacyCellTablesGiveTheSameProbabilities(String name) throws Exception {
    check("legacy/" + name, data(name), name + ".proba.csv");
    check("legacy/" + name, data(name, "edge_data"), name + ".edge.proba.csv");
    HDPModel nodes = ModelFile.read(TestFiles.golden().resolve(name + ".hdpbnc"));
    HDPModel cells = ModelFile.read(TestFiles.golden().resolve("legacy").resolve(name + ".hdpbnc"));
    assertEquals(cells.numCells(), nodes.numCells());
    assertEquals(cells.describe(), nodes.describe());
  }

  /** The node table's list columns as the reader hands them out: offsets by the cardinality, every item. */
  @org.junit.jupiter.api.Test
  void theNodeTablesListsAreReadWithTheirOffsets() throws Exception {
    byte[] bytes = Files.readAllBytes(TestFiles.golden().resolve("weather-kdb1-hdp.hdpbnc"));
    ArrowFileReader reader = new ArrowFileReader(bytes);
    assertEquals(java.util.Arrays.asList(ModelFile.NODE_COLUMNS), reader.fieldNames());
    List<ArrowFileReader.Column> tree1 = reader.readBatch(1);
    ArrowFileReader.Column count = tree1.get(5);
    ArrowFileReader.Column logProb = tree1.get(6);
    assertEquals(ArrowFileReader.ColumnType.LIST_INT64, count.type);
    assertEquals(ArrowFileReader.ColumnType.LIST_FLOAT64, logProb.type);
    assertEquals(8, count.length); // the temperature tree: 8 nodes of 3 values (docs/model-format.md section 7)
    assertArrayEquals(new int[] {0, 3, 6, 9, 12, 15, 18, 21, 24}, count.offsets);
    assertEquals(24, count.items);
    assertArrayEquals(new long[] {4, 6, 4, 2, 4, 3}, java.util.Arrays.copyOf((long[]) count.values, 6));
    assertEquals(-1.233906, ((double[]) logProb.values)[0], 1e-6);
    assertEquals(-1.056416, ((double[]) logProb.values)[23], 1e-6);
    List<ArrowFileReader.Column> lazy = reader.readBatch(1, false);
    assertArrayEquals((double[]) logProb.values, (double[]) ArrowFileReader.values(lazy.get(6)), 0.0);
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
    String bif = model.toXMLBIF("diabetes");
    assertTrue(bif.contains("<NAME>diabetes (ESKDB: member 0 of 3, the ensemble averages them all)</NAME>"), bif);
    // member 0's network is what the model itself holds
    assertEquals(model.member(0).numCells(), model.numCells());
    HDPModel single = ModelFile.read(TestFiles.golden().resolve("vote-kdb2-hdp.hdpbnc"));
    assertEquals(1, single.numMembers());
    // 16 attributes of long names: the drawing shows a part of the network, and says so
    assertTrue(single.toXMLBIF("vote").contains("<NAME>vote; drawn: the class and "), single.toXMLBIF("vote"));
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
  }
}
