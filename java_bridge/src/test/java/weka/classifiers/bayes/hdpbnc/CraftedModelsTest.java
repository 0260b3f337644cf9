package weka.classifiers.bayes.hdpbnc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The crafted model files of tests/golden/crafted (see make_crafted.py), which Python's reader judges in
 * tests/test_modelfile_crafted.py: this reader refuses the same ones (bytes that are not UTF-8, escapes
 * that spell lone surrogates, numbers outside JSON's grammar, nesting past the bound, other major
 * versions, nodes no fit writes, hostile Arrow structure, values of another type, classes that are not the
 * class labels, a repeated parent) with the messages the manifest gives, and reads the valid ones to the
 * same names and, where the manifest gives data, to Python's probabilities.
 */
class CraftedModelsTest {

  static Path dir() {
    return TestFiles.repo().resolve("tests").resolve("golden").resolve("crafted");
  }

  static Map<String, Object> manifest() throws Exception {
    return ModelFile.asMap(Json.parse(new String(Files.readAllBytes(dir().resolve("manifest.json")),
      StandardCharsets.UTF_8)));
  }

  static Stream<String> names() throws Exception {
    return manifest().keySet().stream();
  }

  @ParameterizedTest
  @MethodSource("names")
  void bothReadersJudgeTheFileAlike(String name) throws Exception {
    Map<String, Object> entry = ModelFile.asMap(manifest().get(name));
    Path file = dir().resolve((String) entry.get("model"));
    if (entry.get("expect").equals("refuse")) {
      ModelFile.ModelFileException e = assertThrows(ModelFile.ModelFileException.class, () -> ModelFile.read(file),
        name + " (" + entry.get("holds") + ") is read");
      String msg = e.getMessage();
      assertTrue(msg.startsWith(file + ": ") && !msg.contains("\n"), msg);
      String[] says = entry.get("message") == null ? new String[] {"corrupted model file ("}
        : ModelFile.strings(entry.get("message"));
      for (String part : says) {
        assertTrue(msg.contains(part), name + ": " + msg + " does not say " + part);
      }
    } else {
      HDPModel m = ModelFile.read(file);
      assertArrayEquals(ModelFile.strings(entry.get("class_values")), m.classValues(), name);
      assertArrayEquals(ModelFile.strings(entry.get("attribute_names")), m.attributeNames(), name);
      assertTrue(m.describe().contains("Structure: "), name);
      if (entry.containsKey("probabilities")) {
        predictsAsPython(m, entry, name);
      }
    }
  }

  /**
   * The entry's data predicted as Python predicts it (the manifest's probabilities, to 1e-9), its dates
   * read in the entry's time zone, if it has one (Weka reads a date's clock time in the JVM's zone).
   */
  static void predictsAsPython(HDPModel m, Map<String, Object> entry, String name) throws Exception {
    java.util.TimeZone zone = java.util.TimeZone.getDefault();
    weka.core.Instances data;
    try {
      if (entry.containsKey("time_zone")) {
        java.util.TimeZone.setDefault(java.util.TimeZone.getTimeZone((String) entry.get("time_zone")));
      }
      data = weka.core.converters.ConverterUtils.DataSource.read(
        TestFiles.repo().resolve((String) entry.get("data")).toString());
      data.setClass(data.attribute((String) entry.get("class")));
      InstanceCoder coder = new InstanceCoder(m, data);
      List<String> lines = Files.readAllLines(dir().resolve((String) entry.get("probabilities")));
      assertEquals(data.numInstances(), lines.size() - 1, name);
      for (int i = 0; i < data.numInstances(); i++) {
        String[] f = lines.get(i + 1).split(",");
        double[] expected = new double[f.length - 1];
        for (int y = 0; y < expected.length; y++) {
          expected[y] = Double.parseDouble(f[y + 1]);
        }
        assertArrayEquals(expected, coder.distribution(data.instance(i)), 1e-9, name + " row " + i);
      }
    } finally {
      java.util.TimeZone.setDefault(zone);
    }
  }

  /** The int32 columns a model whose cardinalities exceed 65,535 has: the same model, the same answers. */
  @Test
  void wideColumnsPredictAsNarrowOnes() throws Exception {
    HDPModel narrow = ModelFile.read(TestFiles.golden().resolve("weather-kdb1-hdp.hdpbnc"));
    HDPModel wide = ModelFile.read(dir().resolve("valid-wide-columns.hdpbnc"));
    java.util.List<String> columns = new java.util.ArrayList<>();
    new ArrowFileReader(Files.readAllBytes(dir().resolve("valid-wide-columns.hdpbnc"))).fields()
      .forEach(f -> columns.add(f.toString()));
    assertEquals(ModelFile.WIDE_COLUMNS, columns);
    weka.core.Instances data = GoldenModelsTest.data("weather-kdb1-hdp", "edge_data");
    InstanceCoder n = new InstanceCoder(narrow, data);
    InstanceCoder w = new InstanceCoder(wide, data);
    for (int i = 0; i < data.numInstances(); i++) {
      assertArrayEquals(n.distribution(data.instance(i)), w.distribution(data.instance(i)), 0.0, "row " + i);
    }
    assertEquals(narrow.describe(), wide.describe());
  }

  /**
   * A network whose SkDB took a smaller model than its best to stay within its table-cell cap (the model
   * document's structure.info.cell_limited) says so in the classifier's output, as hdp-bnc info does.
   */
  @Test
  void aNetworkShrunkToItsCellCapSaysSo() throws Exception {
    HDPModel capped = ModelFile.read(dir().resolve("valid-cell-limited.hdpbnc"));
    assertArrayEquals(new int[] {0}, capped.cellLimitedMembers());
    assertTrue(capped.describe().contains("Cell cap: the best model (4 attributes, k=2) has 90 table cells, more than "
      + "the cap of 60: this is the best within it (4 attributes, k=1)"), capped.describe());
    HDPModel golden = ModelFile.read(TestFiles.golden().resolve("weather-kdb1-hdp.hdpbnc"));
    assertEquals(0, golden.cellLimitedMembers().length);
    assertTrue(!golden.describe().contains("Cell cap"), golden.describe());
    // an ensemble names its members
    HDPModel eskdb = ModelFile.read(TestFiles.golden().resolve("diabetes-eskdb-hdp.hdpbnc"));
    eskdb.member(1).m_CellLimited = new long[] {6, 2, 900, 500};
    eskdb.member(2).m_CellLimited = new long[] {5, 2, 700, 500};
    assertTrue(eskdb.describe().contains("Cell cap: 2 of 3 members took a smaller model than their best, to stay "
      + "within 500 table cells each: members 1, 2\n"), eskdb.describe());
  }

  @Test
  void theManifestListsEveryFileAndBothVerdicts() throws Exception {
    Map<String, Object> m = manifest();
    try (Stream<Path> files = Files.list(dir())) {
      assertEquals(m.size(), files.filter(p -> p.toString().endsWith(".hdpbnc")).count());
    }
    List<Object> verdicts = m.values().stream().map(e -> ModelFile.asMap(e).get("expect"))
      .collect(java.util.stream.Collectors.toList());
    assertTrue(verdicts.contains("refuse") && verdicts.contains("accept"), verdicts.toString());
  }

  @Test
  void strictParsingRefusesWhatJsonDoesNotHold() {
    String[] bad = {"01", "1.", ".5", "+1", "1e", "1e+", "-", "-x", "NaN", "Infinity", "\"\\u+0e9\"",
      "\"\\u00g0\"", "\"\\ud800\"", "\"\\udc00\\ud800\"", "[" .repeat(Json.MAX_NESTING + 1)
        + "]".repeat(Json.MAX_NESTING + 1)};
    for (String s : bad) {
      assertThrows(IllegalArgumentException.class, () -> Json.parseUtf8(s.getBytes(StandardCharsets.UTF_8)), s);
    }
    byte[][] notUtf8 = {{'"', (byte) 0xff, '"'}, {'"', (byte) 0xc0, (byte) 0xaf, '"'},
      {'"', (byte) 0xed, (byte) 0xa0, (byte) 0x80, '"'}, {'"', (byte) 0xe2, (byte) 0x82, '"'}};
    for (byte[] b : notUtf8) {
      assertThrows(IllegalArgumentException.class, () -> Json.parseUtf8(b), java.util.Arrays.toString(b));
    }
    assertEquals("\ud83d\ude00", Json.parseUtf8("\"\\ud83d\\ude00\"".getBytes(StandardCharsets.UTF_8)));
    assertEquals(-0.0, Json.parseUtf8("-0.0".getBytes(StandardCharsets.UTF_8)));
    assertEquals(0L, Json.parseUtf8("-0".getBytes(StandardCharsets.UTF_8)));
    assertEquals(50.0, Json.parseUtf8("0.5E+2".getBytes(StandardCharsets.UTF_8)));
    String deep = "[".repeat(Json.MAX_NESTING) + "]".repeat(Json.MAX_NESTING);
    assertEquals(deep, Json.write(Json.parseUtf8(deep.getBytes(StandardCharsets.UTF_8))));
    // the spool's documents keep the lenient reading of strings: Python writes lone surrogates as escapes
    assertEquals("\udc80", Json.parse("\"\\udc80\""));
  }

  /** Labels read as numbers by hdp_plugin's rule: ASCII decimal literals, nothing around them (label_number). */
  @Test
  void labelsReadAsNumbersByOneGrammar() {
    Object[][] cases = {{"3", 3.0}, {"3.0", 3.0}, {"-0", -0.0}, {"+1", 1.0}, {"1.", 1.0}, {".5", 0.5},
      {"1e3", 1000.0}, {"1E-2", 0.01}, {"10d", null}, {"8f", null}, {"1_0", null}, {"\u0663", null}, {" 3", null},
      {"3 ", null}, {"inf", null}, {"Infinity", null}, {"NaN", null}, {"0x1p3", null}, {"1e400", null}, {"", null},
      {"-", null}, {".", null}, {"1e", null}, {"\uff13", null}};
    for (Object[] c : cases) {
      assertEquals(c[1], InstanceCoder.labelNumber((String) c[0]), (String) c[0]);
    }
  }
}
