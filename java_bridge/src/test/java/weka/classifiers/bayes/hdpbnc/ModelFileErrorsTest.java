package weka.classifiers.bayes.hdpbnc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.Test;

import weka.core.Instances;

/**
 * Every way a model file can be bad gives a ModelFileException naming the file, never a wrong
 * answer: missing, empty, truncated, another format, flipped bytes (checksum), an older or a newer
 * major version, an Arrow file that is not a model, and (with the checksum recomputed, so that the edit
 * is the file's only fault) a model document or a node that is not what a fit writes, named by its
 * tree and node.
 */
class ModelFileErrorsTest {

  static byte[] golden() throws Exception {
    return Files.readAllBytes(TestFiles.golden().resolve("weather-kdb1-hdp.hdpbnc"));
  }

  static String fails(byte[] data) {
    ModelFile.ModelFileException e = assertThrows(ModelFile.ModelFileException.class,
      () -> ModelFile.read(data, "m.hdpbnc"));
    assertTrue(e.getMessage().startsWith("m.hdpbnc: "), e.getMessage());
    return e.getMessage();
  }

  @Test
  void missingFile() {
    ModelFile.ModelFileException e = assertThrows(ModelFile.ModelFileException.class,
      () -> ModelFile.read(Path.of("/nonexistent/m.hdpbnc")));
    assertTrue(e.getMessage().contains("cannot read the model file"), e.getMessage());
  }

  @Test
  void filesBeyondTwoGibAreRefusedNotOutOfMemory(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
    Path big = dir.resolve("big.hdpbnc");
    try (java.io.RandomAccessFile f = new java.io.RandomAccessFile(big.toFile(), "rw")) {
      f.setLength(3L << 30); // sparse on the usual file systems: no disk space used
    }
    ModelFile.ModelFileException e = assertThrows(ModelFile.ModelFileException.class, () -> ModelFile.read(big));
    assertTrue(e.getMessage().startsWith(big + ": the model file has 3221225472 bytes, more than"), e.getMessage());
    Path small = dir.resolve("small.hdpbnc");
    Files.write(small, golden());
    e = assertThrows(ModelFile.ModelFileException.class, () -> ModelFile.read(small, 100));
    assertTrue(e.getMessage().contains("more than the 100 this reader can hold"), e.getMessage());
  }

  @Test
  void emptyTruncatedAndForeign() throws Exception {
    byte[] g = golden();
    assertTrue(fails(new byte[0]).contains("not an hdp-bnc model file"));
    for (int keep : new int[] {5, 100, g.length / 2, g.length - 1}) {
      byte[] cut = java.util.Arrays.copyOf(g, keep);
      assertTrue(fails(cut).contains("not an hdp-bnc model file"), "truncated to " + keep);
    }
    assertTrue(fails("@relation x\n@attribute a {0,1}\n@data\n".getBytes(StandardCharsets.UTF_8))
      .contains("not an hdp-bnc model file"));
  }

  @Test
  void flippedBytesGiveAnErrorOrTheSameAnswer() throws Exception {
    byte[] g = golden();
    HDPModel ref = ModelFile.read(g, "ref");
    Instances data = GoldenModelsTest.data("weather-kdb1-hdp");
    InstanceCoder refCoder = new InstanceCoder(ref, data);
    Random r = new Random(0);
    int errors = 0;
    for (int trial = 0; trial < 300; trial++) {
      byte[] b = g.clone();
      int at = r.nextInt(b.length);
      b[at] ^= (byte) (1 << r.nextInt(8));
      HDPModel m;
      try {
        m = ModelFile.read(b, "m.hdpbnc");
      } catch (ModelFile.ModelFileException e) {
        errors++;
        assertTrue(e.getMessage().startsWith("m.hdpbnc: "), e.getMessage());
        continue;
      }
      InstanceCoder coder = new InstanceCoder(m, data);
      for (int i = 0; i < data.numInstances(); i++) {
        assertArrayEquals(refCoder.distribution(data.instance(i)), coder.distribution(data.instance(i)), 0.0,
          "byte " + at + " flipped, row " + i);
      }
    }
    assertTrue(errors > 100, "only " + errors + " of 300 flips detected");
  }

  /** The golden ensemble (3 members) with its model document edited (ModelBytes.editDocument). */
  static byte[] ensemble(String from, String to, String at) throws Exception {
    return ModelBytes.editDocument(Files.readAllBytes(TestFiles.golden().resolve("diabetes-eskdb-hdp.hdpbnc")), from,
      to, at);
  }

  static void refused(byte[] data, String what, String expected) {
    String msg = fails(data);
    assertTrue(msg.startsWith("m.hdpbnc: corrupted model file (") && msg.contains(expected) && !msg.contains("\n"),
      what + ": " + msg);
  }

  @Test
  void aTamperedEnsembleWithARecomputedChecksumIsRefused() throws Exception {
    HDPModel ok = ModelFile.read(ensemble("\"n_members\":3}", "\"n_members\":3}", "first"), "m.hdpbnc");
    assertTrue(ok.numMembers() == 3 && ok.weight(2) == 1.0 / 3, "the untampered ensemble reads");
    String third = "\"weight\":0.3333333333333333";
    String[][] cases = {
      {"\"n_members\":3}", "\"n_members\":4}", "first", "params.n_members is 4 but the file holds 3 members"},
      {"\"n_members\":3}", "\"n_members\":1}", "first", "params.n_members is 1"},
      {"\"structure\":\"eskdb\"", "\"structure\": \"skdb\"", "first", "a skdb model of 3 networks"},
      {third, "\"weight\":1e308             ", "first", "the members' weights sum to 1.0E308, not 1"},
      {third, "\"weight\":1e308             ", "all", "the members' weights sum to Infinity, not 1"},
      {third, "\"weight\":0.5000000000000000", "first", "the members' weights sum to 1.16"},
      {third, "\"weight\":1e-300            ", "all", "the members' weights sum to 3.0E-300, not 1"},
      {third, "\"weight\":0.0000000000000000", "last", "a member's weight 0.0"},
      {third, "\"weight\":-.3333333333333333", "first", "unreadable model metadata"},
      {third, "\"weight\":-0.333333333333333", "first", "a member's weight -0.333333333333333"},
      {third, "\"weight\":true              ", "last", "members[2].weight is not a number"},
      {third, "\"weight\":\"0.33333333333333\"", "first", "members[0].weight is not a number"},
      {"\"backoff\":\"parent\"", "\"backoff\":\"parenT\"", "first", "back-off parenT is not the hdp estimator's"},
      {"\"estimator\":\"hdp\"", "\"estimator\":\"mle\"", "first", "the estimator does not match the parameters"},
    };
    for (String[] c : cases) {
      refused(ensemble(c[0], c[1], c[2]), c[1] + " at " + c[2], c[3]);
    }
    // weights other than 1/n that sum to one are the file's to choose
    HDPModel unequal = ModelFile.read(unequalWeights(), "m.hdpbnc");
    assertTrue(unequal.weight(0) == 0.5 && unequal.weight(1) == 0.25 && unequal.weight(2) == 0.25);
  }

  /** The golden ensemble with the weights 0.5, 0.25 and 0.25. */
  static byte[] unequalWeights() throws Exception {
    String third = "\"weight\":0.3333333333333333";
    byte[] b = ensemble(third, "\"weight\":0.5000000000000000", "first");
    b = ModelBytes.editDocument(b, third, "\"weight\":0.2500000000000000", "first");
    return ModelBytes.editDocument(b, third, "\"weight\":0.2500000000000000", "first");
  }

  /**
   * The {@code temporal} of an attribute (dates or durations) is one of Python's kinds, and only on a numeric
   * attribute: the weather model's first attribute, outlook (nominal), and diabetes' pedi (numeric).
   */
  @Test
  void aBadRecordOfDatesIsRefusedAsPythonRefusesIt() throws Exception {
    byte[] weather = golden();
    String outlook = "{\"name\":\"outlook\",\"values\":[\"sunny\",\"overcast\",\"rainy\"],\"numeric\":false,"
      + "\"cut_points\":null";
    String shorter = "{\"name\":\"\",\"values\":[\"s\",\"o\",\"r\"],\"numeric\":false,\"cut_points\":null,";
    String[][] cases = {
      {shorter + "\"temporal\":\"date\"", "attribute '': bad temporal date"},
      {shorter + "\"temporal\":123456", "members[0].attributes[0].temporal is not a string"},
      // a kind of dates, on a nominal attribute
      {shorter + "\"temporal\":\"datetime\"", "attribute '': bad temporal datetime"},
    };
    for (String[] c : cases) { // the attribute's name and labels shortened to make room
      String to = c[0] + " ".repeat(outlook.length() - c[0].length());
      refused(ModelBytes.editDocument(weather, outlook, to, "first"), c[0], c[1]);
    }
    // a kind of dates on a numeric attribute reads (its labels shortened to make room)
    byte[] diabetes = Files.readAllBytes(TestFiles.golden().resolve("diabetes-tan-mestimate.hdpbnc"));
    for (String kind : new String[] {"datetime", "duration"}) {
      HDPModel m = ModelFile.read(ModelBytes.editDocument(diabetes, "[\"(-inf-0.5275]\",\"(0.5275-inf)\"]",
        String.format("[\"a\",\"b\"],\"temporal\":\"%s\" ", kind), "first"), "m.hdpbnc");
      assertTrue(m.attributeNames()[6].equals("pedi"), kind);
    }
  }

  @Test
  void olderAndNewerMajorVersionsAndOtherFormats() throws Exception {
    byte[] g = golden();
    for (String old : new String[] {"1,0", "2,0", "3,0", "3,1"}) {
      String msg = fails(ModelBytes.editDocument(g, "\"format_version\":[4,0]", "\"format_version\":[" + old + "]",
        "first"));
      assertTrue(msg.equals("m.hdpbnc: model format " + old.replace(',', '.') + " is no longer read by this Weka "
        + "package (it reads 4.x); train the model again"), msg);
    }
    String msg = fails(ModelBytes.editDocument(g, "\"format_version\":[4,0]", "\"format_version\":[5,0]", "first"));
    assertTrue(msg.equals("m.hdpbnc: model format 5.0 is newer than this Weka package reads (4.x); upgrade the "
      + "HDPBayesNet package"), msg);
    // the version is read before the checksum and the columns: a file of an older format says so whatever it holds
    String s = new String(g, StandardCharsets.ISO_8859_1);
    byte[] three = s.replace("\"format_version\":[4,0]", "\"format_version\":[3,0]").getBytes(
      StandardCharsets.ISO_8859_1);
    assertTrue(fails(three).contains("model format 3.0 is no longer read"));
    byte[] other = s.replace("\"format\":\"hdp-bnc-model\"", "\"format\":\"hdp-bnc-modeX\"").getBytes(
      StandardCharsets.ISO_8859_1);
    assertTrue(fails(other).contains("not an hdp-bnc model file"));
    byte[] minor = s.replace("\"format_version\":[4,0]", "\"format_version\":[4,7]").getBytes(
      StandardCharsets.ISO_8859_1);
    assertTrue(fails(minor).contains("checksum mismatch"), "a newer minor is read, but the checksum covers it");
    HDPModel newerMinor = ModelFile.read(ModelBytes.withChecksum(minor), "m.hdpbnc");
    assertTrue(newerMinor.numClasses() == 2);
  }

  /** One edit of the weather model's temperature tree (tree 1, docs/model-format.md section 7). */
  private static byte[] edit(int buffer, int i, double value) throws Exception {
    byte[] b = golden();
    if (buffer == ModelBytes.LOG_BACKOFF || buffer == ModelBytes.LOG_PROB) {
      ModelBytes.setDouble(b, 1, buffer, i, value);
    } else {
      ModelBytes.setInt(b, 1, buffer, i, (int) value);
    }
    return ModelBytes.withChecksum(b);
  }

  @Test
  void inconsistentNodesAreOneLineNamingTheTreeAndTheNode() throws Exception {
    byte[] g = golden();
    double lp9 = ModelBytes.getDouble(g, 1, ModelBytes.LOG_PROB, 9);
    Object[][] cases = {
      // node 3 (play = yes, outlook = sunny) holds the cells 9 and 10: the values 1 and 2
      {ModelBytes.VALUE, 10, 3.0, "tree 1, node 3: a cell's value out of range"},
      {ModelBytes.VALUE, 9, 2.0, "tree 1, node 3: cells not sorted by value"},
      {ModelBytes.LOG_BACKOFF, 3, 0.1, "tree 1, node 3: a back-off weight outside (0, 1]"},
      {ModelBytes.LOG_BACKOFF, 3, Double.NEGATIVE_INFINITY, "tree 1, node 3: a back-off weight outside (0, 1]"},
      {ModelBytes.LOG_BACKOFF, 3, Double.NaN, "tree 1, node 3: a back-off weight outside (0, 1]"},
      {ModelBytes.LOG_BACKOFF, 3, -0.5, "tree 1, node 3: its distribution does not sum to one"},
      {ModelBytes.LOG_PROB, 9, 0.5, "tree 1, node 3: a log-probability that is not finite and at most 0"},
      {ModelBytes.LOG_PROB, 9, Double.NaN, "tree 1, node 3: a log-probability that is not finite and at most 0"},
      {ModelBytes.LOG_PROB, 9, Double.POSITIVE_INFINITY, "tree 1, node 3: a log-probability that is not finite"},
      {ModelBytes.LOG_PROB, 9, Double.NEGATIVE_INFINITY, "tree 1, node 3: a log-probability that is not finite"},
      {ModelBytes.LOG_PROB, 9, lp9 - 0.1, "tree 1, node 3: its distribution does not sum to one"},
      // the shape: children 2, 3, 2, 0, 0, 0, 0, 0; branches 0, 0, 1, 0, 1, 2, 0, 2
      {ModelBytes.CHILDREN, 0, 3.0, "tree 1: the nodes' children do not add up to its nodes"},
      {ModelBytes.CHILDREN, 0, 0.0, "tree 1: the nodes' children do not add up to its nodes"},
      {ModelBytes.CHILDREN, 0, 1.0, "tree 1: the nodes' children do not add up"},
      {ModelBytes.BRANCH, 0, 1.0, "tree 1, node 0: a root's branch must be 0"},
      {ModelBytes.BRANCH, 2, 2.0, "tree 1, node 2: branch value out of range"},
      {ModelBytes.BRANCH, 5, 3.0, "tree 1, node 5: branch value out of range"},
      {ModelBytes.BRANCH, 4, 0.0, "tree 1, node 4: children not sorted by branch value"},
      {ModelBytes.BRANCH, 2, 0.0, "tree 1, node 2: children not sorted by branch value"},
      {ModelBytes.BRANCH, 1, 65535.0, "tree 1, node 1: branch value out of range"},
      // the cells' offsets 0, 3, 6, 9, 11, 14, 16, 18, 20
      {ModelBytes.OFFSETS, 4, 9.0, "tree 1, node 3: a node without a cell"},
      {ModelBytes.OFFSETS, 4, 8.0, "unreadable record batch"},
      {ModelBytes.OFFSETS, 8, 19.0, "unreadable record batch"},
      {ModelBytes.OFFSETS, 0, 1.0, "unreadable record batch"},
    };
    for (Object[] c : cases) {
      refused(edit((Integer) c[0], (Integer) c[1], (Double) c[2]), "buffer " + c[0] + " value " + c[1] + " = " + c[2],
        (String) c[3]);
    }
    // children 1, 4, 2: node 2 is below node 1, and its children one level too deep
    byte[] b = golden();
    ModelBytes.setInt(b, 1, ModelBytes.CHILDREN, 0, 1);
    ModelBytes.setInt(b, 1, ModelBytes.CHILDREN, 1, 4);
    refused(ModelBytes.withChecksum(b), "children 1, 4, 2", "tree 1: deeper than its branching variables");
    // children 0, 5, 2: node 1 would be its own parent
    b = golden();
    ModelBytes.setInt(b, 1, ModelBytes.CHILDREN, 0, 0);
    ModelBytes.setInt(b, 1, ModelBytes.CHILDREN, 1, 5);
    refused(ModelBytes.withChecksum(b), "children 0, 5, 2", "tree 1: a node comes before its parent");
  }

  /** An HDP node's cells are its parent's: a value its parent has no cell for is refused. */
  @Test
  void anHdpCellItsParentHasNotIsRefused() throws Exception {
    byte[] g = Files.readAllBytes(TestFiles.golden().resolve("vote-kdb2-hdp.hdpbnc"));
    ArrowFileReader r = new ArrowFileReader(g);
    for (int t = 0; t < r.numBatches(); t++) {
      List<ArrowFileReader.Column> cols = r.readBatch(t, true);
      int[] children = (int[]) cols.get(1).values;
      int[] offsets = cols.get(3).offsets;
      int[] values = (int[]) cols.get(3).children.get(0).children.get(0).values;
      int[] parent = new int[children.length];
      for (int j = 0, pos = 1; j < children.length; j++) {
        for (int k = 0; k < children[j]; k++) {
          parent[pos++] = j;
        }
      }
      // a node, one of its cells, and a value its parent lacks that keeps its cells sorted
      for (int j = 1; j < children.length; j++) {
        int p = parent[j];
        for (int i = offsets[j]; i < offsets[j + 1]; i++) {
          int lo = i == offsets[j] ? -1 : values[i - 1];
          int hi = i + 1 == offsets[j + 1] ? Integer.MAX_VALUE : values[i + 1];
          for (int v = lo + 1; v < hi && v < 3; v++) {
            boolean parentHas = false;
            for (int q = offsets[p]; q < offsets[p + 1]; q++) {
              parentHas |= values[q] == v;
            }
            if (!parentHas) {
              byte[] b = g.clone();
              ModelBytes.setInt(b, t, ModelBytes.VALUE, i, v);
              refused(ModelBytes.withChecksum(b), "tree " + t + " cell " + i, "tree " + t + ", node " + j
                + ": a cell its parent has not");
              return;
            }
          }
        }
      }
    }
    throw new AssertionError("no node of the vote model can take a value its parent lacks");
  }
}
