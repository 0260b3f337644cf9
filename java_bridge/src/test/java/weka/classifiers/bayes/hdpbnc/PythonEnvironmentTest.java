package weka.classifiers.bayes.hdpbnc;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

import javax.swing.SwingUtilities;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Making the package's environment says what it is doing at least every 10 s, also while pip is quiet
 * (it shows no progress bars without a terminal): here a real Python that prints one pip-like line and
 * then nothing for 11 s.
 */
class PythonEnvironmentTest {

  @Test
  void aQuietStepStillGetsALineWithinTenSeconds(@TempDir Path dir) throws Exception {
    String env = System.getenv("HDP_BNC_PYTHON");
    String python = env != null && !env.trim().isEmpty() ? env.trim() : "python3";
    FeedbackTest.RecordingLogger panel = new FeedbackTest.RecordingLogger();
    Feedback fb = new Feedback(panel, false);
    Path log = dir.resolve("install.log");
    long start = System.nanoTime();
    PythonEnvironment.run(Arrays.asList(python, "-c", "import time; print('Collecting numba', flush=True); "
      + "print('  Downloading numba.whl (3.8 MB)', flush=True); time.sleep(11.5); print('Successfully installed numba')"),
      log, fb, "pip install hdp_plugin.whl", dir);
    fb.flush();
    SwingUtilities.invokeAndWait(() -> { });
    assertTrue((System.nanoTime() - start) / 1e9 >= 11, "the step ran");
    assertTrue(panel.logged.stream().anyMatch(m -> m.contains("Collecting numba")), panel.logged.toString());
    assertTrue(panel.logged.stream().anyMatch(m -> m.matches("HDPBayesNet:   still pip install hdp_plugin.whl \\([89] s\\): "
      + "Downloading numba.whl \\(3.8 MB\\)")), panel.logged.toString());
    assertTrue(panel.status.stream().anyMatch(m -> m.startsWith("HDPBayesNet: still pip install")), panel.status.toString());
    assertTrue(new String(Files.readAllBytes(log), java.nio.charset.StandardCharsets.UTF_8).contains("Successfully"));
  }
}
