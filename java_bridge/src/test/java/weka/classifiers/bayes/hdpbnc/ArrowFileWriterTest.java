package weka.classifiers.bayes.hdpbnc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import weka.core.Attribute;
import weka.core.DenseInstance;
import weka.core.Instances;
import weka.core.Utils;
import weka.core.converters.ConverterUtils.DataSource;

/**
 * The Arrow writer's numeric columns read back bit for bit through the reader, nulls where Weka has
 * missing values, in batches; nominal columns are dictionary-encoded (which the model-file reader
 * refuses by design; Python reads them, see DaemonIT).
 */
class ArrowFileWriterTest {

  @Test
  void numericColumnsRoundTripExactly(@TempDir Path tmp) throws Exception {
    ArrayList<Attribute> atts = new ArrayList<>();
    atts.add(new Attribute("x"));
    atts.add(new Attribute("y with space"));
    int n = ArrowFileWriter.BATCH_ROWS + 10;
    Instances d = new Instances("r", atts, n);
    java.util.Random r = new java.util.Random(0);
    for (int i = 0; i < n; i++) {
      double x = i % 97 == 0 ? Utils.missingValue() : r.nextGaussian() * 1e-300;
      double y = i % 3 == 0 ? Double.longBitsToDouble(r.nextLong() & 0x7fefffffffffffffL) : -0.0;
      d.add(new DenseInstance(1, new double[] {x, y}));
    }
    Path f = tmp.resolve("d.arrow");
    ArrowFileWriter.write(d, f);
    ArrowFileReader reader = new ArrowFileReader(Files.readAllBytes(f));
    assertEquals(List.of("x", "y with space"), reader.fieldNames());
    assertEquals(2, reader.numBatches());
    int row = 0;
    for (int b = 0; b < reader.numBatches(); b++) {
      List<ArrowFileReader.Column> cols = reader.readBatch(b, true);
      double[] x = (double[]) cols.get(0).values;
      double[] y = (double[]) cols.get(1).values;
      // read without the values: the same values decoded later from the raw bytes, the same validity
      List<ArrowFileReader.Column> later = reader.readBatch(b, false);
      assertEquals(null, later.get(0).values);
      assertArrayEquals(x, (double[]) ArrowFileReader.values(later.get(0)));
      assertArrayEquals(y, (double[]) ArrowFileReader.values(later.get(1)));
      assertArrayEquals(cols.get(0).valid, later.get(0).valid);
      assertEquals(8 * x.length, later.get(0).raw.remaining());
      for (int i = 0; i < x.length; i++, row++) {
        boolean missing = d.instance(row).isMissing(0);
        assertEquals(!missing, cols.get(0).valid == null || cols.get(0).valid[i], "row " + row);
        if (!missing) {
          assertEquals(Double.doubleToRawLongBits(d.instance(row).value(0)), Double.doubleToRawLongBits(x[i]));
        }
        assertEquals(Double.doubleToRawLongBits(d.instance(row).value(1)), Double.doubleToRawLongBits(y[i]));
      }
      assertEquals(null, cols.get(1).valid);
    }
    assertEquals(n, row);
  }

  @Test
  void nominalColumnsAreDictionaries(@TempDir Path tmp) throws Exception {
    Instances vote = DataSource.read(TestFiles.data().resolve("vote.arff").toString());
    Path f = tmp.resolve("v.arrow");
    ArrowFileWriter.write(vote, f);
    byte[] bytes = Files.readAllBytes(f);
    assertEquals("ARROW1", new String(bytes, 0, 6, "US-ASCII"));
    IOException e = assertThrows(IOException.class, () -> new ArrowFileReader(bytes));
    assertTrue(e.getMessage().contains("dictionary"), e.getMessage());
  }

  @Test
  void emptyData(@TempDir Path tmp) throws Exception {
    ArrayList<Attribute> atts = new ArrayList<>();
    atts.add(new Attribute("x"));
    Instances d = new Instances("r", atts, 0);
    Path f = tmp.resolve("e.arrow");
    ArrowFileWriter.write(d, f);
    ArrowFileReader reader = new ArrowFileReader(Files.readAllBytes(f));
    assertEquals(1, reader.numBatches());
    assertArrayEquals(new double[0], (double[]) reader.readBatch(0, true).get(0).values);
    assertFalse(reader.fieldNames().isEmpty());
  }

  /**
   * A date goes to the daemon as its clock time in UTC, as hdp_plugin reads the same ARFF file, whatever the
   * JVM's time zone (Weka reads a date without a zone as the JVM's clock time); a date with a zone is its
   * instant. The model codes new dates the same way (InstanceCoder.utcMillis).
   */
  @Test
  void datesAreTheirClockTimeInUtc(@TempDir Path tmp) throws Exception {
    java.util.TimeZone zone = java.util.TimeZone.getDefault();
    try {
      java.util.TimeZone.setDefault(java.util.TimeZone.getTimeZone("Pacific/Chatham"));
      ArrayList<Attribute> atts = new ArrayList<>();
      atts.add(new Attribute("when", "yyyy-MM-dd'T'HH:mm:ss"));
      atts.add(new Attribute("zoned", "yyyy-MM-dd'T'HH:mm:ssXXX"));
      Instances d = new Instances("r", atts, 1);
      d.add(new DenseInstance(1, new double[] {atts.get(0).parseDate("2020-03-05T10:00:00"),
        atts.get(1).parseDate("2020-03-05T10:00:00+01:00")}));
      Path f = tmp.resolve("d.arrow");
      ArrowFileWriter.write(d, f);
      List<ArrowFileReader.Column> cols = new ArrowFileReader(Files.readAllBytes(f)).readBatch(0, true);
      long utc = java.time.Instant.parse("2020-03-05T10:00:00Z").toEpochMilli();
      assertEquals((double) utc, ((double[]) cols.get(0).values)[0]);
      assertEquals((double) (utc - 3600_000), ((double[]) cols.get(1).values)[0]);
      assertEquals((double) utc, InstanceCoder.utcMillis(atts.get(0), d.instance(0).value(0)));
    } finally {
      java.util.TimeZone.setDefault(zone);
    }
  }
}
