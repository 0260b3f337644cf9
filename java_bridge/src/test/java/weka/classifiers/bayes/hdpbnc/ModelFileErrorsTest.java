package weka.classifiers.bayes.hdpbnc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;

import org.junit.jupiter.api.Test;

import weka.core.Instances;

/**
 * Every way a model file can be bad gives a ModelFileException naming the file, never a wrong
 * answer: missing, empty, truncated, another format, flipped bytes (checksum), a newer major
 * version, an Arrow file that is not a model.
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

  /** The file with its checksum recomputed over its (possibly tampered) documents and cells. */
  static byte[] withChecksum(byte[] data) throws Exception {
    ArrowFileReader r = new ArrowFileReader(data);
    java.util.Map<String, byte[]> meta = r.metadata();
    java.util.List<java.util.List<ArrowFileReader.Column>> batches = new java.util.ArrayList<>();
    for (int i = 0; i < r.numBatches(); i++) {
      batches.add(r.readBatch(i));
    }
    String fresh = ModelFile.digest(meta.get(ModelFile.MODEL_KEY), meta.get(ModelFile.TRAINING_KEY), batches);
    String old = new String(meta.get(ModelFile.CHECKSUM_KEY), StandardCharsets.US_ASCII);
    return new String(data, StandardCharsets.ISO_8859_1).replace(old, fresh).getBytes(StandardCharsets.ISO_8859_1);
  }

  /**
   * The golden ensemble (3 members) with {@code from} replaced by {@code to} (same length) in its model
   * document, at the first, the last or every place; the file holds the document twice (in the schema
   * message and in the footer), and both copies change.
   */
  static byte[] ensemble(String from, String to, String at) throws Exception {
    byte[] g = Files.readAllBytes(TestFiles.golden().resolve("diabetes-eskdb-hdp.hdpbnc"));
    String s = new String(g, StandardCharsets.ISO_8859_1);
    String doc = new String(new ArrowFileReader(g).metadata().get(ModelFile.MODEL_KEY), StandardCharsets.ISO_8859_1);
    assertTrue(from.length() == to.length() && doc.contains(from), from);
    String changed;
    if (at.equals("all")) {
      changed = doc.replace(from, to);
    } else {
      int i = at.equals("first") ? doc.indexOf(from) : doc.lastIndexOf(from);
      changed = doc.substring(0, i) + to + doc.substring(i + from.length());
    }
    return withChecksum(s.replace(doc, changed).getBytes(StandardCharsets.ISO_8859_1));
  }

  @Test
  void aTamperedEnsembleWithARecomputedChecksumIsRefused() throws Exception {
    HDPModel ok = ModelFile.read(ensemble("\"n_members\":3}", "\"n_members\":3}", "first"), "m.hdpbnc");
    assertTrue(ok.numMembers() == 3 && ok.weight(2) == 1.0 / 3, "the untampered ensemble reads");
    String third = "\"weight\":0.3333333333333333";
    String[][] cases = {
      {"\"n_members\":3}", "\"n_members\":4}", "first", "ensemble.n_members is 4 but the file holds 3 members"},
      {"\"n_members\":3}", "\"n_members\":1}", "first", "ensemble.n_members is 1"},
      {"\"n_members\":3}", "\"n_members\":2}", "last", "params.n_members is 2"},
      {third, "\"weight\":1e308             ", "first", "member 0 has weight 1.0E308"},
      {third, "\"weight\":1e308             ", "all", "member 0 has weight 1.0E308"},
      {third, "\"weight\":0.5000000000000000", "first", "member 0 has weight 0.5"},
      {third, "\"weight\":1e-300            ", "all", "member 0 has weight 1.0E-300"},
      {third, "\"weight\":true              ", "last", "member 2 has weight true"},
      {third, "\"weight\":\"0.33333333333333\"", "first", "member 0 has weight 0.33333333333333"},
      {"\"kind\":\"eskdb\"", "\"kind\":\"eskdX\"", "first", "ensemble kind eskdX is not eskdb"},
    };
    for (String[] c : cases) {
      String msg = fails(ensemble(c[0], c[1], c[2]));
      assertTrue(msg.startsWith("m.hdpbnc: corrupted model file (") && msg.contains(c[3]) && !msg.contains("\n"),
        c[1] + " at " + c[2] + ": " + msg);
    }
  }

  @Test
  void aBadRecordOfDatesIsRefusedAsPythonRefusesIt() throws Exception {
    byte[] g = golden();
    String s = new String(g, StandardCharsets.ISO_8859_1);
    String doc = new String(new ArrowFileReader(g).metadata().get(ModelFile.MODEL_KEY), StandardCharsets.ISO_8859_1);
    String from = "\"name\":\"outlook\"";
    for (String to : new String[] {"\"temporal\":\"dat\"", "\"temporal\":12345"}) {
      assertTrue(from.length() == to.length() && doc.contains(from), to);
      String msg = fails(withChecksum(s.replace(doc, doc.replace(from, to)).getBytes(StandardCharsets.ISO_8859_1)));
      assertTrue(msg.contains("bad temporal"), msg);
    }
  }

  @Test
  void newerMajorVersionAndOtherFormat() throws Exception {
    byte[] g = golden();
    String s = new String(g, StandardCharsets.ISO_8859_1);
    byte[] newer = s.replace("\"format_version\":[3,0]", "\"format_version\":[4,0]").getBytes(
      StandardCharsets.ISO_8859_1);
    assertTrue(!java.util.Arrays.equals(g, newer), "format_version not found in the golden file");
    String msg = fails(newer);
    assertTrue(msg.contains("model format 4.0 is newer"), msg);
    byte[] other = s.replace("\"format\":\"hdp-bnc-model\"", "\"format\":\"hdp-bnc-modeX\"").getBytes(
      StandardCharsets.ISO_8859_1);
    assertTrue(fails(other).contains("not an hdp-bnc model file"));
    byte[] minor = s.replace("\"format_version\":[3,0]", "\"format_version\":[3,7]").getBytes(
      StandardCharsets.ISO_8859_1);
    assertTrue(fails(minor).contains("checksum mismatch"), "a newer minor is read, but the checksum covers it");
  }
}
