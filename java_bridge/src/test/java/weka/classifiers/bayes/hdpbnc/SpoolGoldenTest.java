package weka.classifiers.bayes.hdpbnc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import weka.classifiers.bayes.HDPBayesNet;
import weka.core.Instances;
import weka.core.converters.ConverterUtils.DataSource;

/**
 * The spool protocol's golden files (tests/golden/spool, written by the daemon's own tests): the
 * Java client reads them as docs/spool-protocol.md says, and the jobs it writes have exactly the
 * fields and JSON types of job-full.json.
 */
class SpoolGoldenTest {

  static Path spoolGolden() {
    return TestFiles.repo().resolve("tests").resolve("golden").resolve("spool");
  }

  static Object read(Path p) throws Exception {
    return Json.parse(new String(Files.readAllBytes(p), StandardCharsets.UTF_8));
  }

  @Test
  void errorFilesBecomeTheDaemonsMessage() throws Exception {
    try (Stream<Path> s = Files.list(spoolGolden().resolve("error"))) {
      for (Path p : (Iterable<Path>) s::iterator) {
        Map<?, ?> doc = (Map<?, ?>) read(p);
        assertEquals(1L, doc.get("protocol"));
        String msg = SpoolClient.errorMessage("j", doc, p.getParent());
        assertTrue(msg.contains((String) doc.get("message")), msg);
        if (!"cancelled".equals(doc.get("code"))) {
          assertTrue(msg.contains("[" + doc.get("code") + "]"), msg);
        }
      }
    }
    assertTrue(SpoolClient.errorMessage("j", null, spoolGolden()).contains("without a readable error.json"));
  }

  @Test
  void heartbeatAndProgress() throws Exception {
    assertTrue(DaemonLauncher.heartbeatReady(read(spoolGolden().resolve("heartbeat.json"))));
    Map<String, Object> starting = new LinkedHashMap<>(ModelFile.asMap(read(spoolGolden().resolve("heartbeat.json"))));
    starting.put("state", "starting");
    assertFalse(DaemonLauncher.heartbeatReady(starting));
    assertFalse(DaemonLauncher.heartbeatReady(null));
    Map<?, ?> progress = (Map<?, ?>) read(spoolGolden().resolve("progress.json"));
    String line = SpoolClient.describeProgress(progress);
    assertTrue(line.startsWith((String) progress.get("phase")), line);
    if (((Long) progress.get("total")) > 0) {
      assertTrue(line.contains("iteration " + progress.get("iteration") + " of " + progress.get("total")), line);
    }
    Map<?, ?> result = (Map<?, ?>) read(spoolGolden().resolve("result.json"));
    assertEquals("model.arrow", result.get("model"));
    assertInstanceOf(List.class, result.get("warnings"));
  }

  @Test
  void publishedJobsHaveTheFieldsAndTypesOfTheProtocol(@TempDir Path spool) throws Exception {
    Map<?, ?> full = (Map<?, ?>) read(spoolGolden().resolve("job-full.json"));
    Instances data = DataSource.read(TestFiles.data().resolve("weather.nominal.arff").toString());
    data.setClassIndex(data.numAttributes() - 1);
    for (String format : new String[] {"arrow", "arff"}) {
      HDPBayesNet c = new HDPBayesNet();
      c.setOptions(new String[] {"-data-format", format, "-B", "20", "-seed", "-1"});
      SpoolClient client = new SpoolClient(spool, "python3", false, 0, false);
      client.setArff(format.equals("arff"));
      String name = client.publish(data, c.jobParameters());
      assertTrue(name.matches("^[A-Za-z0-9_][A-Za-z0-9_.@+-]{0,127}$") && !name.endsWith(".tmp"), name);
      Path job = spool.resolve("new").resolve(name);
      assertTrue(Files.isRegularFile(job.resolve("data." + format)));
      Map<?, ?> doc = (Map<?, ?>) read(job.resolve("job.json"));
      for (Map.Entry<?, ?> e : doc.entrySet()) {
        assertTrue(full.containsKey(e.getKey()), "unknown field " + e.getKey());
        Object expected = full.get(e.getKey());
        if (e.getValue() != null && expected != null) {
          assertEquals(expected.getClass(), e.getValue().getClass(), "type of " + e.getKey());
        }
      }
      assertEquals(1L, doc.get("protocol"));
      assertEquals("data." + format, doc.get("data"));
      assertEquals("play", doc.get("class_attribute"));
      assertEquals(4294967295L, doc.get("seed")); // -1 as an unsigned int: the protocol wants seed >= 0
      assertEquals(20L, doc.get("burn_in"));
      for (String sub : Spool.SUBDIRS) {
        assertTrue(Files.isDirectory(spool.resolve(sub)), sub);
      }
      try (Stream<Path> tmp = Files.list(spool.resolve("tmp"))) {
        assertEquals(0, tmp.count());
      }
    }
  }
}
