package weka.classifiers.bayes;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import weka.classifiers.bayes.hdpbnc.Spool;
import weka.core.Instances;

/**
 * A daemon that serves the spool but is not the one this installation would start is replaced: one of
 * another hdp_plugin version (a real daemon whose version string is set to 0.0.1 before it starts), and
 * one whose Python environment was deleted under it (as uninstalling the Weka package does). The client
 * asks it to stop (its stop marker), waits for it to go, starts its own and trains.
 */
class DaemonReplacementIT {

  @TempDir
  Path m_Tmp;
  private final List<Process> m_Started = new ArrayList<>();

  @BeforeAll
  static void python() {
    PythonSide.assumeHdpPlugin();
  }

  @AfterEach
  void stop() throws Exception {
    Path spool = m_Tmp.resolve("spool");
    if (Files.isDirectory(spool)) {
      assertTrue(Spool.stopDaemons(spool, 60000));
    }
    for (Process p : m_Started) {
      p.destroyForcibly();
    }
  }

  /** Starts {@code python ARGS} in the spool, output to a log, and waits for a ready heartbeat. */
  Map<?, ?> startDaemon(Path spool, String... args) throws Exception {
    Spool.create(spool);
    List<String> cmd = new ArrayList<>(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(cmd).directory(spool.toFile()).redirectErrorStream(true)
      .redirectOutput(m_Tmp.resolve("old-daemon.log").toFile());
    Process p = pb.start();
    m_Started.add(p);
    long end = System.currentTimeMillis() + 180_000;
    while (System.currentTimeMillis() < end) {
      assertTrue(p.isAlive(), () -> "the daemon exited: " + read(m_Tmp.resolve("old-daemon.log")));
      for (String id : Spool.liveDaemons(spool)) {
        Object beat = DaemonIT.heartbeat(spool, id);
        if (beat instanceof Map && "running".equals(((Map<?, ?>) beat).get("state"))
          && ((Map<?, ?>) beat).get("workers").equals(((Map<?, ?>) beat).get("ready_workers"))) {
          return (Map<?, ?>) beat;
        }
      }
      Thread.sleep(100);
    }
    throw new AssertionError("the daemon did not get ready");
  }

  static String read(Path p) {
    try {
      return new String(Files.readAllBytes(p), StandardCharsets.UTF_8);
    } catch (java.io.IOException e) {
      return "";
    }
  }

  /** Trains through the spool with the tests' Python, and checks the old daemon went and a new one served. */
  void trainReplacing(Path spool, Process old) throws Exception {
    HDPBayesNet c = new HDPBayesNet();
    c.setOptions(new String[] {"-S", "kdb", "-K", "1", "-I", "50"});
    c.setPythonExecutable(PythonSide.python());
    c.setSpoolDirectory(spool.toFile());
    Instances data = DaemonIT.data("weather.nominal.arff", "play");
    c.buildClassifier(data);
    assertEquals(1.0, c.distributionForInstance(data.instance(0))[0] + c.distributionForInstance(data.instance(0))[1],
      1e-12);
    assertTrue(old.waitFor(60, TimeUnit.SECONDS), "the old daemon still runs");
    List<String> live = Spool.liveDaemons(spool);
    assertEquals(1, live.size(), live.toString());
    Map<?, ?> beat = DaemonIT.awaitHeartbeat(spool, live.get(0));
    assertFalse("0.0.1".equals(beat.get("version")), beat.toString());
    try (Stream<Path> s = Files.list(spool.resolve("done"))) {
      assertEquals(0, s.count());
    }
  }

  @Test
  void aDaemonOfAnotherVersionIsStoppedAndReplaced() throws Exception {
    Path spool = m_Tmp.resolve("spool");
    Map<?, ?> beat = startDaemon(spool, PythonSide.python(), "-c", "import hdp_plugin._version as v; "
      + "v.__version__ = '0.0.1'; import runpy, sys; sys.argv = ['hdp_plugin', 'daemon', 'run', " + pyString(spool)
      + ", '--idle-exit', '600']; runpy.run_module('hdp_plugin', run_name='__main__', alter_sys=True)");
    assertEquals("0.0.1", beat.get("version"));
    trainReplacing(spool, m_Started.get(0));
  }

  @Test
  void aDaemonWhosePythonWasDeletedIsStoppedAndReplaced() throws Exception {
    Assumptions.assumeFalse(System.getProperty("os.name", "").toLowerCase(Locale.ROOT).startsWith("windows"),
      "skipped: Windows does not delete the files of a running Python");
    // a virtual environment that sees the tests' Python's packages, deleted once its daemon runs
    Path env = m_Tmp.resolve("env");
    run(PythonSide.python(), "-m", "venv", "--without-pip", env.toString());
    Path py = env.resolve("bin").resolve("python");
    String theirs = run(PythonSide.python(), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])");
    String ours = run(py.toString(), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])");
    Files.write(Path.of(ours).resolve("tests-python.pth"), ("import site; site.addsitedir(" + pyString(Path.of(theirs))
      + ")\n").getBytes(StandardCharsets.UTF_8));
    Path spool = m_Tmp.resolve("spool");
    Map<?, ?> beat = startDaemon(spool, py.toString(), "-m", "hdp_plugin", "daemon", "run", spool.toString(),
      "--idle-exit", "600");
    assertEquals(py.toString(), beat.get("python"));
    try (Stream<Path> s = Files.walk(env)) {
      s.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
    assertFalse(Files.exists(py));
    trainReplacing(spool, m_Started.get(0));
  }

  static String pyString(Path p) {
    return "'" + p.toString().replace("\\", "\\\\").replace("'", "\\'") + "'";
  }

  static String run(String... cmd) throws Exception {
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
    assertTrue(p.waitFor(120, TimeUnit.SECONDS) && p.exitValue() == 0, String.join(" ", cmd) + ": " + out);
    return out;
  }
}
