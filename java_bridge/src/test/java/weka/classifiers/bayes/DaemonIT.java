package weka.classifiers.bayes;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;

import weka.classifiers.Evaluation;
import weka.classifiers.bayes.hdpbnc.Json;
import weka.classifiers.bayes.hdpbnc.Spool;
import weka.classifiers.bayes.hdpbnc.TestFiles;
import weka.core.Instances;
import weka.core.SerializationHelper;
import weka.core.Utils;
import weka.core.converters.ConverterUtils.DataSource;

/**
 * Training through the real hdp-bnc daemon (skipped when the Python side is not importable): the
 * golden models come back bit for bit, cross-validation works, a saved model predicts without the
 * daemon, and every failure gives a clear exception with nothing left running.
 */
class DaemonIT {

  @TempDir
  static Path s_Spool;
  static List<Path> s_Spools = new ArrayList<>();

  @BeforeAll
  static void python() {
    PythonSide.assumeHdpPlugin();
    s_Spools.add(s_Spool);
  }

  @AfterAll
  static void stopDaemons() throws Exception {
    for (Path spool : s_Spools) {
      assertTrue(Spool.stopDaemons(spool, 60000), "a daemon is still running on " + spool);
    }
    // the first spool is JUnit's @TempDir (deleted by JUnit); none was added when the Python side is missing
    for (Path spool : s_Spools.subList(Math.min(1, s_Spools.size()), s_Spools.size())) {
      try (Stream<Path> s = Files.walk(spool)) {
        s.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
    Files.deleteIfExists(Path.of(System.getProperty("java.io.tmpdir"), "hdp-bnc-daemon-" + ProcessHandle.current().pid()
      + ".log"));
  }

  static HDPBayesNet classifier(Path spool, String... options) throws Exception {
    HDPBayesNet c = new HDPBayesNet();
    c.setOptions(options.clone());
    c.setPythonExecutable(PythonSide.python());
    c.setSpoolDirectory(spool.toFile());
    return c;
  }

  /**
   * @return daemon {@code id}'s heartbeat document, read once it is there: a daemon takes its lock before
   *   its first heartbeat, and on a busy machine the lock alone may show for a while
   */
  static Map<?, ?> awaitHeartbeat(Path spool, String id) throws InterruptedException {
    Path file = spool.resolve("daemons").resolve(id + ".json");
    for (long end = System.currentTimeMillis() + 120_000; System.currentTimeMillis() < end; Thread.sleep(50)) {
      Object beat = heartbeat(spool, id);
      if (beat instanceof Map) {
        return (Map<?, ?>) beat;
      }
    }
    throw new AssertionError("no heartbeat in " + file);
  }

  /** @return daemon {@code id}'s heartbeat document, or null while it is not there (or not whole) */
  static Object heartbeat(Path spool, String id) {
    try {
      return Json.parse(new String(Files.readAllBytes(spool.resolve("daemons").resolve(id + ".json")),
        StandardCharsets.UTF_8));
    } catch (java.io.IOException | IllegalArgumentException e) {
      return null;
    }
  }

  static Instances data(String file, String cls) throws Exception {
    Instances d = DataSource.read(TestFiles.data().resolve(file).toString());
    d.setClass(d.attribute(cls));
    return d;
  }

  /** The golden models' settings, as HDPBayesNet options. */
  static String[] goldenOptions(String name) throws Exception {
    Map<?, ?> entry = (Map<?, ?>) ((Map<?, ?>) Json.parse(new String(Files.readAllBytes(
      TestFiles.golden().resolve("manifest.json")), StandardCharsets.UTF_8))).get(name);
    Map<?, ?> p = (Map<?, ?>) entry.get("params");
    List<String> o = new ArrayList<>();
    o.add("-S");
    o.add((String) p.get("structure"));
    if (p.containsKey("k")) {
      o.add("-K");
      o.add(p.get("k").toString());
    }
    o.add("-E");
    o.add((String) p.get("estimator"));
    if (p.containsKey("iterations")) {
      o.add("-I");
      o.add(p.get("iterations").toString());
    }
    o.add("-seed");
    o.add(p.get("random_state").toString());
    return o.toArray(new String[0]);
  }

  @ParameterizedTest
  @org.junit.jupiter.params.provider.CsvSource({"weather-kdb1-hdp,arrow", "vote-kdb2-hdp,arrow",
    "diabetes-tan-mestimate,arrow", "weather-kdb1-hdp,arff", "diabetes-tan-mestimate,arff"})
  void trainingFromWekaReproducesTheGoldenModels(String name, String format) throws Exception {
    Map<?, ?> entry = (Map<?, ?>) ((Map<?, ?>) Json.parse(new String(Files.readAllBytes(
      TestFiles.golden().resolve("manifest.json")), StandardCharsets.UTF_8))).get(name);
    String file = Path.of((String) entry.get("data")).getFileName().toString();
    Instances d = data(file, (String) entry.get("class"));
    HDPBayesNet c = classifier(s_Spool, goldenOptions(name));
    c.setDataFormat(new weka.core.SelectedTag(format, HDPBayesNet.TAGS_DATA_FORMAT));
    c.buildClassifier(d);
    List<String> lines = Files.readAllLines(TestFiles.golden().resolve(name + ".proba.csv"));
    for (int i = 0; i < d.numInstances(); i++) {
      String[] f = lines.get(i + 1).split(",");
      double[] p = c.distributionForInstance(d.instance(i));
      for (int y = 0; y < p.length; y++) {
        assertEquals(Double.parseDouble(f[y + 1]), p[y], 1e-9, name + " row " + i);
      }
    }
  }

  @Test
  void crossValidationAndASavedModel() throws Exception {
    Instances d = data("vote.arff", "Class");
    HDPBayesNet c = classifier(s_Spool, "-S", "kdb", "-K", "2", "-I", "100");
    Evaluation ev = new Evaluation(d);
    ev.crossValidateModel(c, d, 5, new Random(1));
    assertTrue(ev.pctCorrect() > 88, "accuracy " + ev.pctCorrect());
    c.buildClassifier(d);
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    SerializationHelper.write(bytes, c);
    assertTrue(Spool.stopDaemons(s_Spool, 60000));
    HDPBayesNet back = (HDPBayesNet) SerializationHelper.read(new ByteArrayInputStream(bytes.toByteArray()));
    back.setPythonExecutable("/nonexistent/python"); // predicting must not need Python
    for (int i = 0; i < d.numInstances(); i++) {
      assertArrayEquals(c.distributionForInstance(d.instance(i)), back.distributionForInstance(d.instance(i)), 0.0);
    }
    assertTrue(back.toString().contains("Structure: kdb (k=2)"), back.toString());
    assertTrue(back.graph().contains("<BIF VERSION=\"0.3\">"));
  }

  @Test
  void theDefaultsTrainAnEskdbEnsembleAtItsAutoIterations() throws Exception {
    // no options: ESKDB-5 x20, ESKDB_ITERATIONS (100) iterations, stochastic MDL cut points (each member its own)
    Instances d = data("weather.numeric.arff", "play");
    HDPBayesNet c = classifier(s_Spool);
    assertEquals("", weka.core.Utils.joinOptions(new HDPBayesNet().getOptions()));
    c.buildClassifier(d);
    String text = c.toString();
    assertTrue(text.contains("ESKDB ensemble of 20 members"), text);
    assertTrue(text.contains("(" + HDPBayesNet.ESKDB_ITERATIONS + " iterations, burn-in "
      + HDPBayesNet.ESKDB_ITERATIONS / 10), text);
    double[] p = c.distributionForInstance(d.instance(0));
    assertEquals(1.0, p[0] + p[1], 1e-12);
  }

  @Test
  void numericAttributesAndMissingValues() throws Exception {
    Instances d = data("diabetes.arff", "class");
    d.instance(0).setMissing(1);
    d.instance(3).setMissing(5);
    HDPBayesNet c = classifier(s_Spool, "-S", "kdb", "-K", "2", "-I", "60", "-seed", "5");
    c.buildClassifier(d);
    double[] p = c.distributionForInstance(d.instance(0));
    assertEquals(1.0, p[0] + p[1], 1e-12);
    Evaluation ev = new Evaluation(d);
    ev.evaluateModel(c, d);
    assertTrue(ev.pctCorrect() > 70, "accuracy " + ev.pctCorrect());
  }

  @Test
  void experimenterRunsHeadlessOnTwoDatasets(@TempDir Path tmp) throws Exception {
    weka.experiment.Experiment exp = new weka.experiment.Experiment();
    exp.setRunLower(1);
    exp.setRunUpper(2);
    weka.experiment.RandomSplitResultProducer rp = new weka.experiment.RandomSplitResultProducer();
    rp.setTrainPercent(66);
    weka.experiment.ClassifierSplitEvaluator se = new weka.experiment.ClassifierSplitEvaluator();
    se.setClassifier(classifier(s_Spool, "-S", "kdb", "-K", "1", "-I", "50"));
    rp.setSplitEvaluator(se);
    exp.setResultProducer(rp);
    weka.experiment.InstancesResultListener listener = new weka.experiment.InstancesResultListener();
    java.io.File results = tmp.resolve("results.arff").toFile();
    listener.setOutputFile(results);
    exp.setResultListener(listener);
    javax.swing.DefaultListModel<java.io.File> datasets = new javax.swing.DefaultListModel<>();
    datasets.addElement(TestFiles.data().resolve("weather.nominal.arff").toFile());
    datasets.addElement(TestFiles.data().resolve("vote.arff").toFile());
    exp.setDatasets(datasets);
    exp.setUsePropertyIterator(false);
    exp.initialize();
    exp.runExperiment();
    exp.postProcess();
    Instances r = DataSource.read(results.getPath());
    assertEquals(4, r.numInstances(), "two datasets x two runs");
    assertTrue(r.attribute("Percent_correct") != null);
    for (int i = 0; i < r.numInstances(); i++) {
      assertTrue(r.instance(i).value(r.attribute("Percent_correct")) > 20);
    }
  }

  @Test
  void wekaCheckClassifier() throws Exception {
    weka.classifiers.CheckClassifier check = new weka.classifiers.CheckClassifier();
    check.setClassifier(classifier(s_Spool, "-S", "kdb", "-I", "20"));
    java.io.PrintStream out = System.out;
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    System.setOut(new java.io.PrintStream(captured, true, "UTF-8"));
    try {
      check.doTests();
    } finally {
      System.setOut(out);
    }
    String text = captured.toString("UTF-8");
    String tests = text.substring(text.indexOf("--> Classifier tests"));
    for (String line : tests.split("\\R")) {
      assertTrue(!line.contains("...no") || line.contains("(OK error message)"), "CheckClassifier: " + line + "\n"
        + text);
    }
    for (String must : new String[] {"basic predict (nominal class, nominal predictors)...yes",
      "basic predict (nominal class, numeric predictors)...yes", "missing predictor values (nominal class, "
        + "numeric & nominal predictors)...yes", "missing class values (nominal class, numeric & nominal "
          + "predictors)...yes", "handle zero training instances (nominal class, numeric & nominal predictors)...yes",
      "correct initialisation during buildClassifier (nominal class, numeric & nominal predictors)...yes",
      "classifier doesn't alter original datasets (nominal class, numeric & nominal predictors)...yes"}) {
      assertTrue(text.replace("\n", "").replace("\r", "").contains(must) || text.contains(must), must + "\n" + text);
    }
  }

  // ------------------------------------------------------------------------------------------
  // failures
  // ------------------------------------------------------------------------------------------

  static Path freshSpool(String name) throws Exception {
    Path p = Files.createTempDirectory("hdp-bnc-" + name + "-");
    s_Spools.add(p);
    return p;
  }

  @Test
  void noPythonGivesAClearMessage() throws Exception {
    HDPBayesNet c = classifier(freshSpool("nopython"));
    c.setPythonExecutable("/nonexistent/bin/python3");
    Exception e = assertThrows(Exception.class, () -> c.buildClassifier(data("weather.nominal.arff", "play")));
    assertTrue(e.getMessage().contains("cannot run the Python executable '/nonexistent/bin/python3'"), e.getMessage());
    assertTrue(e.getMessage().contains("let the installed Weka package make its own Python environment"),
      e.getMessage());
    assertFalse(e.getMessage().contains("pip install hdp-plugin"), e.getMessage()); // no such package
  }

  @Test
  void aPythonWithoutHdpPluginGivesAClearMessage(@TempDir Path venv) throws Exception {
    // a fresh virtual environment: a working Python that cannot import hdp_plugin
    Process p = new ProcessBuilder(PythonSide.python(), "-m", "venv", "--without-pip", venv.toString())
      .redirectErrorStream(true).start();
    p.getOutputStream().close();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    org.junit.jupiter.api.Assumptions.assumeTrue(p.waitFor() == 0, "cannot make a virtual environment: " + out);
    Path python = venv.resolve("bin").resolve("python");
    if (!Files.exists(python)) {
      python = venv.resolve("Scripts").resolve("python.exe"); // Windows
    }
    HDPBayesNet c = classifier(freshSpool("venv"));
    c.setPythonExecutable(python.toString());
    Exception e = assertThrows(Exception.class, () -> c.buildClassifier(data("weather.nominal.arff", "play")));
    assertTrue(e.getMessage().contains("The hdp_plugin Python package is not installed for '" + python + "'"),
      e.getMessage());
    assertTrue(e.getMessage().contains("install hdp_plugin into a Python 3.10 or later with pip"), e.getMessage());
  }

  @Test
  void noDaemonAndNoAutoStart() throws Exception {
    HDPBayesNet c = classifier(freshSpool("nostart"), "-do-not-start-daemon");
    Exception e = assertThrows(Exception.class, () -> c.buildClassifier(data("weather.nominal.arff", "play")));
    assertTrue(e.getMessage().contains("no hdp-bnc daemon is running"), e.getMessage());
  }

  @Test
  void aFailedJobGivesTheDaemonsMessage() throws Exception {
    // a failure only the daemon can find (bad option values are refused in Java, before any job)
    HDPBayesNet c = classifier(s_Spool, "-S", "kdb", "-discretization", "none", "-I", "10");
    Exception e = assertThrows(Exception.class, () -> c.buildClassifier(data("weather.numeric.arff", "play")));
    assertTrue(e.getMessage().contains("is numeric; discretization 'none' needs nominal data"), e.getMessage());
    assertTrue(e.getMessage().startsWith("HDPBayesNet: training failed: "), e.getMessage());
  }

  static Instances slowData() throws Exception {
    return data("vote.arff", "Class");
  }

  /** Waits until a job of this spool is claimed by a daemon; returns its folder. */
  static Path awaitClaimed(Path spool) throws Exception {
    long end = System.currentTimeMillis() + 60000;
    while (System.currentTimeMillis() < end) {
      Path claimed = spool.resolve("claimed");
      if (Files.isDirectory(claimed)) {
        try (Stream<Path> daemons = Files.list(claimed)) {
          for (Path d : (Iterable<Path>) daemons::iterator) {
            try (DirectoryStream<Path> jobs = Files.newDirectoryStream(d)) {
              for (Path j : jobs) {
                return j;
              }
            }
          }
        }
      }
      Thread.sleep(50);
    }
    throw new AssertionError("no job was claimed in " + spool);
  }

  /** Waits until the job has been moved to failed/ by the daemon, and returns its error code. */
  /**
   * Waits until a cancelled job has left the spool: the client removes a cancelled job's folders once the
   * daemon has failed it (so its error.json may be seen only briefly; if seen, it must say cancelled).
   *
   * @return "cancelled"
   */
  static String awaitCancelledAndRemoved(Path spool, String job) throws Exception {
    Path failed = spool.resolve("failed").resolve(job);
    long end = System.currentTimeMillis() + 60000;
    while (System.currentTimeMillis() < end) {
      Object doc = null;
      try {
        doc = Json.parse(new String(Files.readAllBytes(failed.resolve("error.json")), StandardCharsets.UTF_8));
      } catch (java.io.IOException | IllegalArgumentException e) {
        // not there (yet, or any more)
      }
      if (doc != null) {
        assertEquals("cancelled", ((Map<?, ?>) doc).get("code"), doc.toString());
      }
      assertTrue(!Files.exists(spool.resolve("done").resolve(job)), "the stopped job " + job + " ran to the end");
      if (!Files.exists(failed) && !Files.exists(spool.resolve("new").resolve(job)) && !claimed(spool, job)
        && !Files.exists(spool.resolve("progress").resolve(job + ".json"))) {
        return "cancelled";
      }
      Thread.sleep(10);
    }
    throw new AssertionError("job " + job + " was not cancelled and removed from " + spool);
  }

  static boolean claimed(Path spool, String job) throws Exception {
    try (Stream<Path> daemons = Files.list(spool.resolve("claimed"))) {
      return daemons.anyMatch(d -> Files.exists(d.resolve(job)));
    }
  }

  static Future<?> trainInBackground(ExecutorService ex, Path spool) throws Exception {
    HDPBayesNet c = classifier(spool, "-S", "kdb", "-I", "10000000");
    return ex.submit(() -> {
      c.buildClassifier(slowData());
      return null;
    });
  }

  @Test
  void interruptionCancelsTheJob() throws Exception {
    Path spool = freshSpool("interrupt");
    ExecutorService ex = Executors.newSingleThreadExecutor();
    try {
      Future<?> f = trainInBackground(ex, spool);
      Path job = awaitClaimed(spool);
      ex.shutdownNow(); // interrupts the training thread, as the Explorer's Stop button does
      ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(30, TimeUnit.SECONDS));
      assertInstanceOf(InterruptedException.class, e.getCause(), Utils.joinOptions(new String[] {"" + e.getCause()}));
      assertEquals("cancelled", awaitCancelledAndRemoved(spool, job.getFileName().toString()));
    } finally {
      ex.shutdownNow();
    }
  }

  @Test
  @SuppressWarnings({"deprecation", "removal"})
  void stopAsTheExplorerDoesCancelsTheJobFiveTimesOutOfFive() throws Exception {
    // the Explorer's Stop button interrupts the training thread and stops it (Thread.stop) at once: the
    // job must be cancelled and its folders removed every time, whatever the thread was doing
    Path spool = freshSpool("stop");
    for (int i = 0; i < 5; i++) {
      HDPBayesNet c = classifier(spool, "-S", "kdb", "-I", "10000000");
      Thread t = new Thread(() -> {
        try {
          c.buildClassifier(slowData());
        } catch (Exception e) {
          // expected: interrupted
        }
      });
      t.start();
      Path job = awaitClaimed(spool);
      Thread.sleep(i * 70); // at different moments of the client's polling
      t.interrupt();
      try {
        t.stop();
      } catch (UnsupportedOperationException e) { // JDK 20 and later: the interruption alone
      }
      t.join(30000);
      assertTrue(!t.isAlive());
      assertEquals("cancelled", awaitCancelledAndRemoved(spool, job.getFileName().toString()));
    }
  }

  @Test
  void twoClassifiersTrainAtOnce() throws Exception {
    Path spool = freshSpool("two");
    ExecutorService ex = Executors.newFixedThreadPool(2);
    try {
      List<Future<double[]>> results = new ArrayList<>();
      for (String k : new String[] {"1", "2"}) {
        results.add(ex.submit(() -> {
          HDPBayesNet c = classifier(spool, "-S", "kdb", "-K", k, "-I", "50");
          Instances d = data("vote.arff", "Class");
          c.buildClassifier(d);
          return c.distributionForInstance(d.instance(0));
        }));
      }
      for (Future<double[]> f : results) {
        double[] p = f.get(120, TimeUnit.SECONDS);
        assertEquals(1.0, p[0] + p[1], 1e-12);
      }
    } finally {
      ex.shutdownNow();
    }
    try (Stream<Path> s = Files.list(spool.resolve("done"))) {
      assertEquals(0, s.count(), "the client removes its finished jobs");
    }
  }

  @Test
  void timeoutCancelsTheJobWithAClearMessage() throws Exception {
    Path spool = freshSpool("timeout");
    HDPBayesNet c = classifier(spool, "-S", "kdb", "-I", "10000000", "-timeout", "3");
    Exception e = assertThrows(Exception.class, () -> c.buildClassifier(slowData()));
    assertTrue(e.getMessage().contains("did not finish within the timeout of 3 s"), e.getMessage());
    assertTrue(e.getMessage().contains("daemon status"), e.getMessage());
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("the job (\\S+) was cancelled").matcher(e.getMessage());
    assertTrue(m.find(), e.getMessage());
    assertEquals("cancelled", awaitCancelledAndRemoved(spool, m.group(1)));
  }

  @Test
  void aDaemonThatDiesMidJobGivesAClearMessage() throws Exception {
    Path spool = freshSpool("kill");
    ExecutorService ex = Executors.newSingleThreadExecutor();
    try {
      Future<?> f = trainInBackground(ex, spool);
      Path job = awaitClaimed(spool);
      String daemon = job.getParent().getFileName().toString();
      Map<?, ?> beat = awaitHeartbeat(spool, daemon);
      List<ProcessHandle> procs = new ArrayList<>();
      ProcessHandle.of((Long) beat.get("pid")).ifPresent(procs::add);
      for (Object w : (List<?>) beat.get("worker_pids")) {
        ProcessHandle.of((Long) w).ifPresent(procs::add);
      }
      assertTrue(!procs.isEmpty());
      for (ProcessHandle p : procs) {
        p.destroyForcibly();
      }
      ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(60, TimeUnit.SECONDS));
      String msg = e.getCause().getMessage();
      assertTrue(msg.contains("died while training job " + job.getFileName()), msg);
      for (ProcessHandle p : procs) {
        p.onExit().get(30, TimeUnit.SECONDS);
        assertTrue(!p.isAlive());
      }
      assertTrue(Spool.liveDaemons(spool).isEmpty());
    } catch (java.util.concurrent.TimeoutException e) {
      fail(e);
    } finally {
      ex.shutdownNow();
    }
  }
}
