package weka.classifiers.bayes;

import java.nio.file.Path;

import weka.core.Instances;

/** The integration tests' helpers, for tests in other packages (the Explorer's). */
public final class PythonSideAccess {

  private PythonSideAccess() {
  }

  /** Skips the calling test when hdp_plugin cannot be imported. */
  public static void assumeHdpPlugin() {
    PythonSide.assumeHdpPlugin();
  }

  /** @return the Python the tests use */
  public static String python() {
    return PythonSide.python();
  }

  /** @return a test data set with its class set */
  public static Instances data(String file, String cls) throws Exception {
    return DaemonIT.data(file, cls);
  }

  /** @return the first job claimed in the spool (waits up to a minute) */
  public static Path awaitClaimed(Path spool) throws Exception {
    return DaemonIT.awaitClaimed(spool);
  }

  /** @return "cancelled" once the job has been cancelled and its folders removed */
  public static String awaitCancelledAndRemoved(Path spool, String job) throws Exception {
    return DaemonIT.awaitCancelledAndRemoved(spool, job);
  }
}
