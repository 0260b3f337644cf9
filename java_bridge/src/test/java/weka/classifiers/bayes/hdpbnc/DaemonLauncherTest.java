package weka.classifiers.bayes.hdpbnc;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the launcher says while a daemon starts: the package's wheel carries the kernels compiled, so the
 * messages say that the daemon compiles them only once its log says numba does (DaemonIT starts real
 * daemons).
 */
class DaemonLauncherTest {

  static void append(Path log, String text) throws Exception {
    Files.write(log, text.getBytes(StandardCharsets.UTF_8), StandardOpenOption.CREATE, StandardOpenOption.APPEND);
  }

  @Test
  void compilingIsSaidOnlyWhenTheDaemonsLogSaysSo(@TempDir Path tmp) throws Exception {
    Path log = tmp.resolve("hdp-bnc-daemon-1.log");
    assertFalse(DaemonLauncher.compiles(log, 0), "no log yet");
    // an earlier start compiled (the log is one per JVM, appended to): not this start's news
    append(log, "2026-01-01 10:00:00 WARNING hdp_plugin.compile: compiling hdp_plugin's numba kernels once (about 30 "
      + "s; later runs load them from numba's cache)...\n");
    long from = DaemonLauncher.logSize(log);
    append(log, "2026-01-01 11:00:00 INFO hdp_plugin.daemon: daemon d1 serving /spool with 1 worker(s)\n");
    assertFalse(DaemonLauncher.compiles(log, from));
    String start = DaemonLauncher.startLine(List.of("python3", "-m", "hdp_plugin", "daemon", "run", "/spool"), log);
    assertFalse(start.contains("compil"), start);
    assertFalse(DaemonLauncher.waiting(3, false).contains("compil"), DaemonLauncher.waiting(3, false));
    append(log, "2026-01-01 11:00:01 WARNING hdp_plugin.compile: compiling hdp_plugin's numba kernels once (about 30 "
      + "s; later runs load them from numba's cache)...\n");
    assertTrue(DaemonLauncher.compiles(log, from));
    assertTrue(DaemonLauncher.waiting(12, true).contains("12 s; it is compiling hdp_plugin's numba kernels, once"),
      DaemonLauncher.waiting(12, true));
  }

  /** The notice the launcher looks for is the one hdp_plugin logs. */
  @Test
  void theNoticeIsHdpPluginsCompileWarning() throws Exception {
    String source = new String(Files.readAllBytes(TestFiles.repo().resolve("hdp_plugin").resolve("runtime")
      .resolve("compile_notice.py")), StandardCharsets.UTF_8);
    assertTrue(source.contains("\nNOTICE = \"" + DaemonLauncher.COMPILE_NOTICE), DaemonLauncher.COMPILE_NOTICE);
    assertTrue(source.contains("log.warning(NOTICE)"), "the notice is logged as a warning");
  }

  /**
   * The package's install message and description, and the classifier's globalInfo: the wheel carries the
   * kernels compiled, so every sentence about compiling them says where it happens.
   */
  @Test
  void theTextsSayCompilingOnlyWhereItHappens() throws Exception {
    String props = new String(Files.readAllBytes(TestFiles.repo().resolve("java_bridge").resolve("src")
      .resolve("main").resolve("package").resolve("Description.props")), StandardCharsets.UTF_8)
      .replaceAll("\\\\n\\\\\\R", " ").replaceAll("\\\\\\R\\s*", " ");
    String info = new weka.classifiers.bayes.HDPBayesNet().globalInfo();
    for (String[] text : new String[][] {{"Description.props", props}, {"globalInfo", info}}) {
      for (String sentence : text[1].split("(?<=\\.)\\s+")) {
        if (sentence.contains("compile")) {
          assertTrue(sentence.contains("only where"), text[0] + ": " + sentence);
        }
      }
    }
  }
}
