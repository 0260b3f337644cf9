package weka.classifiers.bayes;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Assumptions;

/** Helpers of the integration tests: the Python with hdp_plugin, Weka's class path, child JVMs. */
final class PythonSide {

  private PythonSide() {
  }

  private static Boolean s_Importable;
  private static final List<Path> s_TempDirs = new ArrayList<>();

  /** Removes the temporary directories of the child JVMs. */
  static synchronized void cleanUp() throws IOException {
    for (Path t : s_TempDirs) {
      try (java.util.stream.Stream<Path> s = Files.walk(t)) {
        s.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
    s_TempDirs.clear();
  }

  /** @return the Python the tests use: $HDP_BNC_PYTHON, else python3 */
  static String python() {
    String env = System.getenv(HDPBayesNet.PYTHON_ENV);
    return env != null && !env.trim().isEmpty() ? env.trim() : HDPBayesNet.DEFAULT_PYTHON;
  }

  /** Skips the calling test, with the reason, when hdp_plugin cannot be imported by {@link #python()}. */
  static synchronized void assumeHdpPlugin() {
    if (s_Importable == null) {
      try {
        Process p = new ProcessBuilder(python(), "-c", "import hdp_plugin.daemon").redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        s_Importable = p.waitFor(120, TimeUnit.SECONDS) && p.exitValue() == 0;
      } catch (IOException | InterruptedException e) {
        s_Importable = false;
      }
    }
    Assumptions.assumeTrue(s_Importable, "skipped: '" + python() + "' cannot import hdp_plugin.daemon (install "
      + "the Python side, or set " + HDPBayesNet.PYTHON_ENV + ")");
  }

  /** @return Weka and its dependencies, without this project (written by the dependency plugin) */
  static String wekaClassPath() throws IOException {
    String file = System.getProperty("hdp.weka.classpath.file", "target/weka.classpath");
    return new String(Files.readAllBytes(Paths.get(file)), StandardCharsets.UTF_8).trim();
  }

  /** @return the Weka package zip built by mvn package */
  static Path packageZip() {
    return Paths.get(System.getProperty("hdp.package.zip", "target/HDPBayesNet-0.1.0.zip")).toAbsolutePath();
  }

  /** The output and exit code of a child process. */
  static final class Result {
    final int code;
    final String output;

    Result(int code, String output) {
      this.code = code;
      this.output = output;
    }
  }

  /**
   * Runs {@code java -cp CP MAIN ARGS} with extra environment variables (a null value removes one), output
   * and error merged.
   *
   * @return its exit code and output
   */
  static Result java(String classPath, Map<String, String> env, long timeoutSeconds, String... args)
    throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>();
    cmd.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-Djava.awt.headless=true");
    cmd.add("-Dweka.packageManager.offline=true");
    // the child's temporary files (the log of a daemon it starts) go where the test cleans up
    Path tmp = Files.createTempDirectory("hdp-bnc-it-tmp-");
    s_TempDirs.add(tmp);
    cmd.add("-Djava.io.tmpdir=" + tmp);
    cmd.add("-cp");
    cmd.add(classPath);
    for (String a : args) {
      cmd.add(a);
    }
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    for (Map.Entry<String, String> e : env.entrySet()) { // a null value removes the variable
      if (e.getValue() == null) {
        pb.environment().remove(e.getKey());
      } else {
        pb.environment().put(e.getKey(), e.getValue());
      }
    }
    File out = File.createTempFile("hdp-bnc-it-", ".out");
    out.deleteOnExit();
    pb.redirectOutput(out);
    Process p = pb.start();
    if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      p.waitFor();
      return new Result(-1, "TIMEOUT\n" + new String(Files.readAllBytes(out.toPath()), StandardCharsets.UTF_8));
    }
    return new Result(p.exitValue(), new String(Files.readAllBytes(out.toPath()), StandardCharsets.UTF_8));
  }
}
