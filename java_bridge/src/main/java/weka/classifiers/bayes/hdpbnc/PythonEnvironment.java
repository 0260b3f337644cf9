/*
 *   This program is free software: you can redistribute it and/or modify
 *   it under the terms of the GNU General Public License as published by
 *   the Free Software Foundation, either version 3 of the License, or
 *   (at your option) any later version.
 */

package weka.classifiers.bayes.hdpbnc;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URISyntaxException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * The Weka package's own Python environment: the package zip carries the hdp_plugin wheel (in
 * {@code python/}); on first use this makes a virtual environment in the package's folder
 * ({@code python-env/}) with the user's Python 3.10 or later and installs the wheel and its
 * dependencies (numpy, numba, pyarrow, liac-arff, typer) into it with pip, from the index pip is set up to
 * use. That takes one to a few minutes, once. The wheel carries the sampler's kernels compiled; only where
 * they do not fit (another platform, or another numba) does the first training compile them, once, which the
 * daemon's log and the launcher's messages then say.
 *
 * <p>Used only when the classifier's pythonExecutable option is at its default and the environment
 * variable HDP_BNC_PYTHON is not set. Run {@code java -cp weka.jar:<package>/HDPBayesNet.jar
 * weka.classifiers.bayes.hdpbnc.PythonEnvironment} to make it ahead of time (it prints what it does).
 */
public final class PythonEnvironment {

  /** The folder of the environment, inside the package's folder. */
  public static final String ENV_DIR = "python-env";
  /** The folder of the wheel, inside the package's folder. */
  public static final String WHEEL_DIR = "python";
  /** Written last: the environment is complete when it names the package's wheel. */
  static final String MARKER = "hdp-bnc-installed.txt";
  /** The Python that is tried first, then {@code python}. */
  public static final String[] BASE_PYTHONS = {"python3", "python"};
  static final long INSTALL_MINUTES = 30;

  private PythonEnvironment() {
  }

  /**
   * The package's folder: the folder of the jar this class came from, when it holds the wheel.
   *
   * @return the folder, or null (not running from an installed package, e.g. in development)
   */
  public static Path packageDir() {
    try {
      java.security.CodeSource cs = PythonEnvironment.class.getProtectionDomain().getCodeSource();
      if (cs == null || cs.getLocation() == null) {
        return null;
      }
      Path jar = Paths.get(cs.getLocation().toURI());
      Path dir = Files.isRegularFile(jar) ? jar.getParent() : null;
      return dir != null && wheel(dir) != null ? dir : null;
    } catch (URISyntaxException | RuntimeException | IOException e) {
      return null;
    }
  }

  /**
   * @param packageDir the package's folder
   * @return the hdp_plugin wheel in its {@code python/} folder, or null
   * @throws IOException if the folder cannot be listed
   */
  public static Path wheel(Path packageDir) throws IOException {
    Path dir = packageDir.resolve(WHEEL_DIR);
    if (!Files.isDirectory(dir)) {
      return null;
    }
    try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir, "hdp_plugin-*.whl")) {
      for (Path p : ds) {
        return p;
      }
    }
    return null;
  }

  /**
   * @param env a virtual environment
   * @return its Python executable ({@code Scripts\python.exe} on Windows, {@code bin/python} elsewhere)
   */
  public static Path venvPython(Path env) {
    boolean windows = System.getProperty("os.name", "").toLowerCase(Locale.ROOT).startsWith("windows");
    return windows ? env.resolve("Scripts").resolve("python.exe") : env.resolve("bin").resolve("python");
  }

  /**
   * @param packageDir the package's folder
   * @return the environment's Python if the environment is complete for the package's wheel, else null
   */
  public static Path ready(Path packageDir) {
    try {
      Path env = packageDir.resolve(ENV_DIR);
      Path wheel = wheel(packageDir);
      Path marker = env.resolve(MARKER);
      if (wheel != null && Files.isRegularFile(marker) && Files.isRegularFile(venvPython(env))
        && new String(Files.readAllBytes(marker), StandardCharsets.UTF_8).trim().equals(wheel.getFileName()
          .toString())) {
        return venvPython(env);
      }
    } catch (IOException e) {
      // not ready
    }
    return null;
  }

  /**
   * The environment's Python, making the environment first if needed (serialised between processes by a
   * lock file, so two Weka processes do not install at once).
   *
   * @param packageDir the package's folder
   * @param feedback where progress goes
   * @return the Python executable of the environment
   * @throws Exception naming what to do when no suitable Python is found or pip fails;
   *           InterruptedException when interrupted (the half-made environment is removed on the next try)
   */
  public static String ensure(Path packageDir, Feedback feedback) throws Exception {
    Path ready = ready(packageDir);
    if (ready != null) {
      return ready.toString();
    }
    Path lockFile = packageDir.resolve(ENV_DIR + ".lock");
    try (FileChannel ch = FileChannel.open(lockFile, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
      FileLock lock = null;
      boolean told = false;
      while (lock == null) {
        try {
          lock = ch.tryLock();
        } catch (java.nio.channels.OverlappingFileLockException e) {
          lock = null; // another thread of this JVM installs
        }
        if (lock == null) {
          if (!told) {
            feedback.log("waiting for another Weka process to finish making the Python environment in "
              + packageDir.resolve(ENV_DIR));
            told = true;
          }
          Thread.sleep(500);
        }
      }
      try {
        ready = ready(packageDir);
        return ready != null ? ready.toString() : create(packageDir, feedback).toString();
      } finally {
        lock.release();
      }
    } catch (IOException e) {
      throw new Exception("HDPBayesNet: cannot make the Python environment in " + packageDir.resolve(ENV_DIR)
        + " (" + e.getMessage() + "). " + ownPythonHint(packageDir), e);
    }
  }

  private static String ownPythonHint(Path packageDir) {
    Path wheel = null;
    try {
      wheel = wheel(packageDir);
    } catch (IOException e) {
      // named generically below
    }
    return "To use a Python of your own instead, install hdp_plugin into it (python3 -m pip install "
      + (wheel != null ? wheel : "<the hdp_plugin wheel in the package's python folder>") + ") and point the "
      + "option -python (pythonExecutable in the GUI) or the environment variable HDP_BNC_PYTHON at it.";
  }

  private static Path create(Path packageDir, Feedback feedback) throws Exception {
    Path env = packageDir.resolve(ENV_DIR);
    Path wheel = wheel(packageDir);
    String base = basePython(packageDir);
    long start = System.nanoTime();
    feedback.log("making HDPBayesNet's own Python environment (once): a virtual environment in " + env + " made with "
      + base + ", then pip installs the hdp_plugin wheel that comes with the package and its dependencies "
      + "(numpy, numba, pyarrow, liac-arff, typer: about 135 MB to download, 500 MB on disk). This takes one to a few minutes; "
      + "the log is " + packageDir.resolve(ENV_DIR + "-install.log"));
    Spool.deleteTree(env); // a half-made one from an interrupted try
    Path log = packageDir.resolve(ENV_DIR + "-install.log");
    Files.deleteIfExists(log);
    run(Arrays.asList(base, "-m", "venv", env.toString()), log, feedback, "creating the virtual environment",
      packageDir);
    Path py = venvPython(env);
    run(Arrays.asList(py.toString(), "-m", "pip", "install", "--disable-pip-version-check", "--no-input",
      wheel.toString()), log, feedback, "pip install " + wheel.getFileName(), packageDir);
    Files.write(env.resolve(MARKER), (wheel.getFileName() + "\n").getBytes(StandardCharsets.UTF_8));
    feedback.log(String.format(Locale.ROOT, "the Python environment is ready (%.0f s): %s",
      (System.nanoTime() - start) / 1e9, py));
    return py;
  }

  /** A Python 3.10 or later: the first of {@link #BASE_PYTHONS} on the PATH that is one. */
  static String basePython(Path packageDir) throws Exception {
    List<String> tried = new ArrayList<>();
    for (String candidate : BASE_PYTHONS) {
      String version = version(candidate);
      if (version == null) {
        tried.add(candidate + " (not found)");
        continue;
      }
      String[] v = version.split("\\.");
      if (Integer.parseInt(v[0]) > 3 || Integer.parseInt(v[0]) == 3 && Integer.parseInt(v[1]) >= 10) {
        return candidate;
      }
      tried.add(candidate + " (Python " + version + ")");
    }
    throw new Exception("HDPBayesNet needs Python 3.10 or later to make its Python environment, and found none on "
      + "the PATH: tried " + String.join(", ", tried) + ". Install Python 3.10 or later (python.org), or "
      + ownPythonHint(packageDir).substring(0, 1).toLowerCase(Locale.ROOT) + ownPythonHint(packageDir).substring(1));
  }

  /** @return "major.minor" of a Python, or null if it does not run */
  static String version(String python) {
    try {
      return output(python, "import sys; print('%d.%d' % sys.version_info[:2])", "\\d+\\.\\d+", null);
    } catch (InterruptedException e) {
      return null;
    }
  }

  /**
   * What {@code python -c code} prints, trimmed, if it exits with 0 within a minute and the output matches
   * {@code pattern}, else null; run in {@code dir} (null: this process's working directory).
   */
  static String output(String python, String code, String pattern, Path dir) throws InterruptedException {
    try {
      Process p = new ProcessBuilder(python, "-c", code).directory(dir == null ? null : dir.toFile())
        .redirectErrorStream(true).start();
      p.getOutputStream().close();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
      boolean ok = p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0 && out.matches(pattern);
      p.destroy();
      return ok ? out : null;
    } catch (IOException e) {
      return null;
    }
  }

  static void run(List<String> cmd, Path log, Feedback feedback, String what, Path packageDir)
    throws Exception {
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    feedback.log("  " + what); // each step says it starts, so the silence is counted from a line on the console
    Process p = pb.start();
    p.getOutputStream().close();
    long started = System.nanoTime();
    java.util.concurrent.atomic.AtomicLong lastLine = new java.util.concurrent.atomic.AtomicLong(started);
    java.util.concurrent.atomic.AtomicReference<String> news = new java.util.concurrent.atomic.AtomicReference<>("");
    Thread pump = new Thread(() -> {
      try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
        String line;
        while ((line = r.readLine()) != null) {
          Files.write(log, (line + System.lineSeparator()).getBytes(StandardCharsets.UTF_8),
            StandardOpenOption.CREATE, StandardOpenOption.APPEND);
          if (line.startsWith("Collecting ") || line.startsWith("Installing collected")
            || line.startsWith("Successfully installed")) {
            feedback.log("  " + line.trim());
            lastLine.set(System.nanoTime());
          } else if (!line.trim().isEmpty()) {
            feedback.status(what + ": " + line.trim(), false);
            news.set(line.trim());
          }
        }
      } catch (IOException e) {
        // the process went away
      }
    }, "HDPBayesNet pip output");
    pump.setDaemon(true);
    pump.start();
    long end = System.nanoTime() + TimeUnit.MINUTES.toNanos(INSTALL_MINUTES);
    try {
      while (!p.waitFor(200, TimeUnit.MILLISECONDS)) {
        long now = System.nanoTime();
        if (now - lastLine.get() >= TimeUnit.MILLISECONDS.toNanos(SpoolClient.STILL_MILLIS)) {
          // pip is quiet while it downloads and installs (no progress bars without a terminal): a line every 8 s
          lastLine.set(now);
          String line = String.format(Locale.ROOT, "  still %s (%.0f s)%s", what, (now - started) / 1e9,
            news.get().isEmpty() ? "" : ": " + news.get());
          feedback.log(line);
          feedback.status(line.trim(), false);
        }
        if (Thread.interrupted()) {
          throw new InterruptedException("HDPBayesNet: interrupted while " + what);
        }
        if (System.nanoTime() > end) {
          throw new Exception("HDPBayesNet: " + what + " did not finish within " + INSTALL_MINUTES + " minutes; see "
            + log);
        }
      }
    } finally {
      if (p.isAlive()) {
        p.destroyForcibly();
      }
    }
    pump.join(5000);
    if (p.exitValue() != 0) {
      throw new Exception("HDPBayesNet: " + what + " failed ('" + String.join(" ", cmd) + "' exited with code "
        + p.exitValue() + "; is the package index reachable?). " + ownPythonHint(packageDir) + " Log " + log + ":\n"
        + Spool.tail(log, 8));
    }
  }

  /**
   * Makes the environment now, printing what it does: {@code java -cp weka.jar:<package>/HDPBayesNet.jar
   * weka.classifiers.bayes.hdpbnc.PythonEnvironment [package folder]}.
   *
   * @param args optionally the package's folder (default: the folder of the jar this class is in)
   * @throws Exception if it cannot be made
   */
  public static void main(String[] args) throws Exception {
    Path dir = args.length > 0 ? Paths.get(args[0]) : packageDir();
    if (dir == null || wheel(dir) == null) {
      System.err.println("no hdp_plugin wheel found " + (dir == null ? "next to this jar" : "in " + dir.resolve(
        WHEEL_DIR)) + "; give the HDPBayesNet package's folder (e.g. ~/wekafiles/packages/HDPBayesNet)");
      System.exit(2);
    }
    Feedback fb = new Feedback(null, true);
    Thread flusher = new Thread(() -> {
      while (!Thread.currentThread().isInterrupted()) {
        fb.flush();
        try {
          Thread.sleep(100);
        } catch (InterruptedException e) {
          return;
        }
      }
    });
    flusher.setDaemon(true);
    flusher.start();
    String py = ensure(dir, fb);
    flusher.interrupt();
    flusher.join();
    fb.flush();
    System.out.println(py);
  }
}
