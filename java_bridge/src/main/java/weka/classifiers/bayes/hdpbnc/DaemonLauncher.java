/*
 *   This program is free software: you can redistribute it and/or modify
 *   it under the terms of the GNU General Public License as published by
 *   the Free Software Foundation, either version 3 of the License, or
 *   (at your option) any later version.
 */

package weka.classifiers.bayes.hdpbnc;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Starting the hdp-bnc daemon that serves a spool from Weka: the Python that runs it (the named one, or the
 * Weka package's own environment, made on first use by {@link PythonEnvironment}), replacing live daemons
 * of another environment or version, and starting the process (no shell, a log in the temporary
 * directory) and waiting for it to get ready.
 */
final class DaemonLauncher {

  /** The Python used where no other is named and no package environment exists. */
  static final String DEFAULT_PYTHON = "python3";
  /** What to do when the named Python cannot run the daemon. */
  static final String INSTALL_HINT = "Leave the option -python (pythonExecutable in the GUI) at its default and "
    + "HDP_BNC_PYTHON unset to let the installed Weka package make its own Python environment; or install "
    + "hdp_plugin into a Python 3.10 or later with pip (the wheel is in the package's python folder, e.g. "
    + "~/wekafiles/packages/HDPBayesNet/python; from a clone of the repository: python3 -m pip install -e .) and "
    + "point -python or HDP_BNC_PYTHON at that Python.";
  /** A daemon started from Weka exits after this many idle seconds. */
  static final int IDLE_EXIT_SECONDS = 600;
  /** Seconds to wait for a started daemon to take its lock. */
  static final int START_SECONDS = 600;
  /** How long to wait for a daemon of another environment or version to stop once asked to. */
  static final long REPLACE_MILLIS = 120_000;

  /**
   * The start of the line a daemon's log gets when numba compiles hdp_plugin's kernels (the warning of
   * hdp_plugin/runtime/compile_notice.py): only then do the messages say that the daemon compiles. The
   * package's wheel carries the kernels compiled, so mostly it does not.
   */
  static final String COMPILE_NOTICE = "compiling hdp_plugin's numba kernels";
  /** The most bytes of a daemon's log that are read for {@link #COMPILE_NOTICE}. */
  static final int NOTICE_BYTES = 1 << 20;

  /** hdp_plugin's version in each Python asked, by executable (asked once per JVM). */
  private static final Map<String, String> s_Versions = new ConcurrentHashMap<>();

  private final Path m_Root;
  private String m_Python;
  private Process m_Started;
  private Path m_DaemonLog;

  /**
   * @param root the spool
   * @param python the Python executable that runs the daemon, or null for the Weka package's own environment
   */
  DaemonLauncher(Path root, String python) {
    m_Root = root;
    m_Python = python;
  }

  /** @return the Python that runs (or would run) the daemon, for messages */
  String python() {
    return m_Python == null ? DEFAULT_PYTHON : m_Python;
  }

  /**
   * The hdp_plugin version the daemon this launcher would start runs: the version of the package's wheel
   * for the package's own environment, else what the named Python imports.
   *
   * @return the version, or null if it cannot be told
   */
  String startedVersion() {
    if (m_Python == null) {
      Path dir = PythonEnvironment.packageDir();
      try {
        Path wheel = dir == null ? null : PythonEnvironment.wheel(dir);
        if (wheel != null) { // hdp_plugin-0.1.0-py3-none-any.whl
          String[] parts = wheel.getFileName().toString().split("-");
          return parts.length > 1 ? parts[1] : null;
        }
      } catch (IOException e) {
        return null;
      }
    }
    String python = python();
    String known = s_Versions.get(python);
    if (known != null) {
      return known.isEmpty() ? null : known;
    }
    String version;
    try {
      version = PythonEnvironment.output(python, "import hdp_plugin._version as v; print(v.__version__)",
        "[0-9A-Za-z.+!_-]+", m_Root);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    }
    s_Versions.put(python, version == null ? "" : version);
    return version;
  }

  /**
   * Why a live daemon of this host should be replaced, from its heartbeat: its Python no longer exists (its
   * environment was deleted, as uninstalling the Weka package does), it runs another hdp_plugin version than
   * the daemon this launcher would start, or it runs the package's own environment as it was before that
   * environment was made again (a reinstall).
   *
   * @param beat the heartbeat document
   * @param version what {@link #startedVersion()} says (null: unknown)
   * @return the reason, or null to keep it
   */
  String staleReason(Object beat, String version) {
    if (!(beat instanceof Map)) {
      return null;
    }
    Map<?, ?> h = (Map<?, ?>) beat;
    if (!(h.get("host") instanceof String) || !Spool.onHost(h, Spool.localHost())) {
      return null; // another host's paths cannot be checked from here
    }
    Object python = h.get("python");
    if (python instanceof String && !((String) python).isEmpty()) {
      try {
        if (!Files.exists(Paths.get((String) python))) {
          return "runs a Python that no longer exists (" + python + ")";
        }
      } catch (InvalidPathException e) {
        return null;
      }
    }
    Object running = h.get("version");
    if (version != null && running instanceof String && !version.equals(running)) {
      return "runs hdp_plugin " + running + ", not " + version + " as the daemon started from here would";
    }
    Path dir = m_Python == null ? PythonEnvironment.packageDir() : null;
    Object started = h.get("started_unix");
    if (dir != null && python instanceof String && started instanceof Number) {
      Path env = dir.resolve(PythonEnvironment.ENV_DIR);
      try {
        if (Paths.get((String) python).toAbsolutePath().normalize().startsWith(env.toAbsolutePath().normalize())
          && Files.getLastModifiedTime(env.resolve(PythonEnvironment.MARKER)).toMillis() / 1000.0
            > ((Number) started).doubleValue()) {
          return "runs the package's Python environment as it was before it was made again";
        }
      } catch (IOException | InvalidPathException e) {
        // no marker: nothing to compare
      }
    }
    return null;
  }

  /**
   * Asks the live daemons of this host that run another environment or version ({@link #staleReason}) to
   * stop (they put unfinished jobs back) and waits for them to go, so that a daemon of this installation is
   * started instead.
   *
   * @param feedback where messages go
   * @throws InterruptedException if interrupted while waiting
   */
  void replaceStaleDaemons(Feedback feedback) throws InterruptedException {
    List<String> live = Spool.liveDaemons(m_Root);
    if (live.isEmpty()) {
      return;
    }
    String version = null;
    boolean asked = false;
    List<String> stale = new ArrayList<>();
    for (String id : live) {
      Object beat = Spool.heartbeat(m_Root, id);
      if (!asked && beat instanceof Map && ((Map<?, ?>) beat).get("version") instanceof String) {
        version = startedVersion();
        asked = true;
      }
      String why = staleReason(beat, version);
      if (why != null) {
        feedback.log("the hdp-bnc daemon " + id + " on " + m_Root + " " + why + ": asking it to stop, to start one "
          + "of this installation");
        try {
          Spool.askToStop(m_Root, id);
          stale.add(id);
        } catch (IOException e) {
          feedback.log("cannot ask the daemon " + id + " to stop (" + e + ")");
        }
      }
    }
    long start = System.currentTimeMillis();
    long told = start;
    while (!stale.isEmpty() && System.currentTimeMillis() - start < REPLACE_MILLIS) {
      stale.removeIf(id -> !Spool.alive(m_Root, id));
      if (System.currentTimeMillis() - told >= SpoolClient.STILL_MILLIS && !stale.isEmpty()) {
        told = System.currentTimeMillis();
        feedback.log("waiting for the daemon " + String.join(", ", stale) + " to stop (it finishes or puts back its "
          + "jobs; " + (told - start) / 1000 + " s)");
      }
      Thread.sleep(100);
    }
  }

  /**
   * Starts {@code python -m hdp_plugin daemon run SPOOL --idle-exit 600} (no shell, as section 6 of
   * docs/spool-protocol.md says) and waits for its heartbeat: state running, every worker ready; or for it
   * to take the job.
   *
   * @param job the published job the daemon is started for
   * @param feedback where messages go
   * @throws Exception naming the Python and what to install when it cannot start
   */
  void start(String job, Feedback feedback) throws Exception {
    if (m_Python == null) {
      Path dir = PythonEnvironment.packageDir();
      m_Python = dir != null ? PythonEnvironment.ensure(dir, feedback) : DEFAULT_PYTHON;
    }
    List<String> cmd = List.of(m_Python, "-m", "hdp_plugin", "daemon", "run", m_Root.toString(), "--idle-exit",
      Integer.toString(IDLE_EXIT_SECONDS));
    // one log per JVM (appended), in the temporary directory: the spool's layout is fixed by the protocol
    m_DaemonLog = Paths.get(System.getProperty("java.io.tmpdir"), "hdp-bnc-daemon-" + ProcessHandle.current().pid()
      + ".log");
    ProcessBuilder pb = new ProcessBuilder(cmd);
    // not Weka's working directory: `python -m` imports from it first, and a folder named hdp_plugin there
    // (a clone of the repository) would shadow the installed package
    pb.directory(m_Root.toFile());
    pb.redirectErrorStream(true);
    pb.redirectOutput(ProcessBuilder.Redirect.appendTo(m_DaemonLog.toFile()));
    long logFrom = logSize(m_DaemonLog); // the log is appended to: this start's lines come after
    feedback.log(startLine(cmd, m_DaemonLog));
    try {
      m_Started = pb.start();
      m_Started.getOutputStream().close(); // the daemon reads no input
    } catch (IOException e) {
      throw new Exception("HDPBayesNet: cannot run the Python executable '" + m_Python + "' (" + e.getMessage()
        + "). " + INSTALL_HINT, e);
    }
    long start = System.currentTimeMillis();
    long lastLine = start;
    long lastLook = 0;
    boolean compiling = false;
    // ready when its heartbeat says so, or as soon as it has taken the job (heartbeats come every 2 s)
    while (!anyDaemonReady() && Files.isDirectory(m_Root.resolve("new").resolve(job))) {
      if (!m_Started.isAlive()) {
        String tail = Spool.tail(m_DaemonLog, 6);
        String hint = tail.contains("No module named") ? " The hdp_plugin Python package is not installed for '"
          + m_Python + "'. " + INSTALL_HINT : "";
        throw new Exception("HDPBayesNet: the hdp-bnc daemon did not start ('" + String.join(" ", cmd)
          + "' exited with code " + m_Started.exitValue() + ")." + hint + (tail.isEmpty() ? "" : "\n" + tail));
      }
      if (!compiling && System.currentTimeMillis() - lastLook >= 1000) {
        lastLook = System.currentTimeMillis();
        compiling = compiles(m_DaemonLog, logFrom);
        if (compiling) {
          feedback.log("the daemon is compiling hdp_plugin's numba kernels, once (kernels the package's wheel "
            + "carries do not fit this machine or its numba); its log says how long that takes");
        }
      }
      String waiting = waiting((System.currentTimeMillis() - start) / 1000, compiling);
      if (System.currentTimeMillis() - lastLine >= SpoolClient.STILL_MILLIS) { // the console too, and its log's news
        lastLine = System.currentTimeMillis();
        String news = Spool.tail(m_DaemonLog, 1).trim();
        feedback.log(waiting + (news.isEmpty() ? "" : "; its log: " + news));
      }
      feedback.status(waiting, false);
      if (System.currentTimeMillis() - start > START_SECONDS * 1000L) {
        m_Started.destroy();
        throw new Exception("HDPBayesNet: the hdp-bnc daemon did not get ready within " + START_SECONDS
          + " s; see its log " + m_DaemonLog);
      }
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        throw new InterruptedException("HDPBayesNet: training interrupted while the hdp-bnc daemon was starting; job "
          + job + " cancelled");
      }
    }
  }

  /**
   * The line that says a daemon is being started: the command and its log. Whether it compiles kernels is
   * said once its log says so ({@link #compiles}).
   */
  static String startLine(List<String> cmd, Path log) {
    return "starting the hdp-bnc daemon: " + String.join(" ", cmd) + " (log: " + log + ")";
  }

  /** The status while a started daemon gets ready, {@code seconds} after its start. */
  static String waiting(long seconds, boolean compiling) {
    return "waiting for the daemon to get ready (" + seconds + " s" + (compiling
      ? "; it is compiling hdp_plugin's numba kernels, once" : "") + ")";
  }

  /** @return the size of a file, 0 if it cannot be told (it does not exist yet) */
  static long logSize(Path log) {
    try {
      return Files.size(log);
    } catch (IOException | RuntimeException e) {
      return 0;
    }
  }

  /**
   * Whether a daemon's log, from byte {@code from} on (what its latest start wrote: the log is appended to),
   * says that numba compiles hdp_plugin's kernels. The daemon writes it while this reads: a line not yet
   * complete is seen at the next look.
   *
   * @param log the daemon's log
   * @param from where the latest start's lines begin
   * @return true if they hold {@link #COMPILE_NOTICE}
   */
  static boolean compiles(Path log, long from) {
    try (java.nio.channels.SeekableByteChannel ch = Files.newByteChannel(log)) {
      ch.position(from);
      java.nio.ByteBuffer buf = java.nio.ByteBuffer.allocate((int) Math.max(0, Math.min(NOTICE_BYTES,
        ch.size() - from)));
      while (buf.hasRemaining() && ch.read(buf) > 0) {
        // read what is there
      }
      return new String(buf.array(), 0, buf.position(), java.nio.charset.StandardCharsets.UTF_8)
        .contains(COMPILE_NOTICE);
    } catch (IOException | RuntimeException e) {
      return false;
    }
  }

  /** @return true if a live daemon's heartbeat says it is running with every worker ready */
  private boolean anyDaemonReady() {
    for (String id : Spool.liveDaemons(m_Root)) {
      if (heartbeatReady(Spool.heartbeat(m_Root, id))) {
        return true;
      }
    }
    return false;
  }

  /**
   * Is a daemon ready, by its heartbeat: state running and every worker ready (section 6)?
   *
   * @param doc the heartbeat document, or null
   * @return true if ready
   */
  static boolean heartbeatReady(Object doc) {
    if (!(doc instanceof Map)) {
      return false;
    }
    Map<?, ?> h = (Map<?, ?>) doc;
    return "running".equals(h.get("state")) && h.get("workers") instanceof Long
      && h.get("workers").equals(h.get("ready_workers"));
  }

  /** @return for an error message: how the daemon started here ended, if it did */
  String exitNote() {
    if (m_Started != null && !m_Started.isAlive()) {
      return " (the daemon started from Weka exited with code " + m_Started.exitValue() + ")";
    }
    return "";
  }

  /** @return for an error message: where the daemon's log is and its last lines, or "." */
  String logNote() {
    if (m_DaemonLog == null) {
      return ".";
    }
    String tail = Spool.tail(m_DaemonLog, 8);
    return ". Daemon log " + m_DaemonLog + (tail.isEmpty() ? "." : ":\n" + tail);
  }
}
