package weka.classifiers.bayes;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.Map;

import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

import weka.classifiers.bayes.hdpbnc.Spool;
import weka.classifiers.bayes.hdpbnc.TestFiles;

/**
 * The Weka package zip installs with Weka's own package manager into a clean WEKA_HOME, the GUI's
 * class discovery finds the classifier, and (with the Python side) weka.Run cross-validates with it.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class PackageInstallIT {

  @TempDir
  static Path s_Home;
  @TempDir
  static Path s_Spool;

  @org.junit.jupiter.api.AfterAll
  static void cleanUp() throws Exception {
    Spool.stopDaemons(s_Spool, 30000);
    PythonSide.cleanUp();
  }

  static Map<String, String> env() {
    Map<String, String> env = new HashMap<>();
    env.put("WEKA_HOME", s_Home.toString());
    return env;
  }

  @Test
  @Order(1)
  void installsWithWekasPackageManager() throws Exception {
    Path zip = PythonSide.packageZip();
    assertTrue(Files.isRegularFile(zip), "no package zip at " + zip + " (run mvn package)");
    PythonSide.Result r = PythonSide.java(PythonSide.wekaClassPath(), env(), 120,
      "weka.core.WekaPackageManager", "-install-package", zip.toString());
    assertEquals(0, r.code, r.output);
    assertTrue(r.output.contains("makes its own Python environment"), "the installation message: " + r.output);
    assertFalse(r.output.contains("pip install hdp-plugin"), r.output); // no such package on the registry
    Path pkg = s_Home.resolve("packages").resolve("HDPBayesNet");
    assertTrue(Files.isRegularFile(pkg.resolve("HDPBayesNet.jar")), r.output);
    assertTrue(Files.isRegularFile(pkg.resolve("Description.props")), r.output);
    java.util.Properties props = new java.util.Properties();
    try (java.io.Reader in = Files.newBufferedReader(pkg.resolve("Description.props"))) {
      props.load(in);
    }
    assertEquals("GPL-3.0-or-later", props.getProperty("License")); // the licence wording of pyproject.toml
    assertTrue(props.getProperty("URL", "").startsWith("https://"), "URL: " + props.getProperty("URL"));
    assertTrue(props.getProperty("Changes", "").startsWith("0.1.0: "), "Changes: " + props.getProperty("Changes"));
    assertTrue(props.getProperty("Maintainer", "").contains("issue tracker"), props.getProperty("Maintainer"));
    assertTrue(Files.list(pkg.resolve("lib")).anyMatch(p -> p.getFileName().toString().startsWith("arrow-format")));
    assertTrue(Files.list(pkg.resolve("python")).anyMatch(p -> p.getFileName().toString().matches(
      "hdp_plugin-.*-py3-none-any\\.whl")), "the package carries no hdp_plugin wheel");
    // the wheel carries the kernels compiled by tools/build_wheel.py (hdp_plugin/runtime/kernel_cache.py)
    Path wheel = Files.list(pkg.resolve("python")).filter(p -> p.getFileName().toString().endsWith(".whl"))
      .findFirst().get();
    try (java.util.zip.ZipFile wheelZip = new java.util.zip.ZipFile(wheel.toFile())) {
      assertNotNull(wheelZip.getEntry("hdp_plugin/_kernels/manifest.json"), "no compiled kernels in " + wheel);
      assertTrue(wheelZip.stream().anyMatch(e -> e.getName().startsWith("hdp_plugin/_kernels/hdp/")
        && e.getName().endsWith(".nbi")), "no sampler kernels in " + wheel);
      // and the same kernels for numba's generic CPU, which the daemon loads on a machine of another CPU
      assertNotNull(wheelZip.getEntry("hdp_plugin/_kernels_generic/manifest.json"), "no portable kernels in " + wheel);
      assertTrue(wheelZip.stream().anyMatch(e -> e.getName().startsWith("hdp_plugin/_kernels_generic/hdp/")
        && e.getName().endsWith(".nbi")), "no portable sampler kernels in " + wheel);
    }
  }

  @Test
  @Order(2)
  void theGuiFindsTheClassifier() throws Exception {
    String cp = PythonSide.wekaClassPath() + java.io.File.pathSeparator
      + Paths.get(System.getProperty("hdp.test.classes", "target/test-classes")).toAbsolutePath();
    PythonSide.Result r = PythonSide.java(cp, env(), 120, PackageDiscovery.class.getName());
    assertEquals(0, r.code, r.output);
    assertTrue(r.output.contains("DISCOVERED=true"), r.output);
    assertTrue(r.output.contains("LOADED=weka.classifiers.bayes.HDPBayesNet"), r.output);
  }

  @Test
  @Order(3)
  void wekaRunCrossValidatesVote() throws Exception {
    PythonSide.assumeHdpPlugin();
    Map<String, String> env = env();
    env.put(HDPBayesNet.PYTHON_ENV, PythonSide.python());
    try {
      PythonSide.Result r = PythonSide.java(PythonSide.wekaClassPath(), env, 600, "weka.Run",
        "weka.classifiers.bayes.HDPBayesNet", "-t", TestFiles.data().resolve("vote.arff").toString(), "-S", "kdb", "-K", "2",
        "-I", "100", "-spool", s_Spool.toString());
      assertEquals(0, r.code, r.output);
      assertTrue(r.output.contains("=== Stratified cross-validation ==="), r.output);
      assertTrue(r.output.contains("Correctly Classified Instances"), r.output);
      assertTrue(r.output.contains("Structure: kdb (k=2)"), r.output);
      // -d saves the model; -l loads it and predicts with no Python at all
      Path model = s_Home.resolve("vote.model");
      r = PythonSide.java(PythonSide.wekaClassPath(), env, 600, "weka.Run", "weka.classifiers.bayes.HDPBayesNet",
        "-t", TestFiles.data().resolve("vote.arff").toString(), "-no-cv", "-S", "kdb", "-K", "2", "-I", "100", "-spool",
        s_Spool.toString(), "-d", model.toString());
      assertEquals(0, r.code, r.output);
      assertTrue(Files.size(model) > 1000);
      String trained = r.output.substring(r.output.indexOf("=== Error on training data ==="));
      assertTrue(Spool.stopDaemons(s_Spool, 30000));
      Map<String, String> noPython = env();
      noPython.put(HDPBayesNet.PYTHON_ENV, "/nonexistent/python3");
      r = PythonSide.java(PythonSide.wekaClassPath(), noPython, 120, "weka.Run", "weka.classifiers.bayes.HDPBayesNet",
        "-l", model.toString(), "-T", TestFiles.data().resolve("vote.arff").toString());
      assertEquals(0, r.code, r.output);
      String reloaded = r.output.substring(r.output.indexOf("=== Error on test data ==="));
      // the same predictions: every line of the two evaluations after their titles agrees
      String[] a = trained.split("\\R");
      String[] b = reloaded.split("\\R");
      for (int i = 1; i < Math.min(a.length, b.length); i++) {
        if (a[i].startsWith("Correctly") || a[i].startsWith("Mean absolute") || a[i].startsWith("Root mean")) {
          assertEquals(a[i], b[i]);
        }
      }
    } finally {
      Spool.stopDaemons(s_Spool, 30000);
    }
  }

  /**
   * One zip is all a Weka user installs: with no Python named (no -python, no HDP_BNC_PYTHON, no
   * PYTHONPATH), the first training makes the package's own virtual environment with the python3 on the
   * PATH, pip installs the wheel the zip carries and its dependencies (from the index pip is set up for; a
   * minute or two with pip's cache), and trains with it; the next run reuses it. About two minutes;
   * -Dhdp.test.onezip=false skips it (e.g. offline).
   */
  @Test
  @Order(4)
  void theFirstTrainingMakesThePackagesOwnPythonEnvironment() throws Exception {
    org.junit.jupiter.api.Assumptions.assumeTrue(Boolean.parseBoolean(System.getProperty("hdp.test.onezip",
      "true")), "skipped: -Dhdp.test.onezip=false");
    Path pkg = s_Home.resolve("packages").resolve("HDPBayesNet");
    Path envDir = pkg.resolve("python-env");
    Map<String, String> env = env();
    env.put(HDPBayesNet.PYTHON_ENV, null);
    env.put("PYTHONPATH", null);
    Path spool = s_Home.resolve("one-zip-spool");
    try {
      String[] run = {"weka.Run", "weka.classifiers.bayes.HDPBayesNet", "-t",
        TestFiles.data().resolve("vote.arff").toString(), "-x", "2", "-S", "kdb", "-K", "2", "-I", "100", "-spool", spool.toString()};
      PythonSide.Result r = PythonSide.java(PythonSide.wekaClassPath(), env, 1500, run);
      assertEquals(0, r.code, r.output);
      assertTrue(r.output.contains("making HDPBayesNet's own Python environment (once)"), r.output);
      assertTrue(r.output.contains("Collecting numba"), r.output);
      assertTrue(r.output.contains("the Python environment is ready"), r.output);
      assertTrue(r.output.contains("starting the hdp-bnc daemon: " + envDir), r.output);
      assertTrue(r.output.contains("Correctly Classified Instances"), r.output);
      // hdp_plugin comes from the environment, not from anywhere else on this machine
      ProcessBuilder pb = new ProcessBuilder(weka.classifiers.bayes.hdpbnc.PythonEnvironment.venvPython(envDir)
        .toString(), "-c", "import hdp_plugin; print(hdp_plugin.__file__)").directory(s_Home.toFile())
        .redirectErrorStream(true);
      pb.environment().remove("PYTHONPATH");
      Process p = pb.start();
      String where = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).trim();
      assertEquals(0, p.waitFor());
      assertTrue(Paths.get(where).startsWith(envDir), where);
      // the next start of a daemon uses it as it is
      assertTrue(Spool.stopDaemons(spool, 30000));
      r = PythonSide.java(PythonSide.wekaClassPath(), env, 600, run);
      assertEquals(0, r.code, r.output);
      assertFalse(r.output.contains("making HDPBayesNet's own Python environment"), r.output);
      assertTrue(r.output.contains("starting the hdp-bnc daemon: " + envDir), r.output);
    } finally {
      Spool.stopDaemons(spool, 30000);
    }
  }
}
