/*
 *   This program is free software: you can redistribute it and/or modify
 *   it under the terms of the GNU General Public License as published by
 *   the Free Software Foundation, either version 3 of the License, or
 *   (at your option) any later version.
 */

package weka.classifiers.bayes.hdpbnc;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import weka.core.Instances;
import weka.core.converters.ArffSaver;

/**
 * One training job's life on the hdp-bnc spool ({@code docs/spool-protocol.md}): publish it, make sure a
 * daemon serves the spool ({@link DaemonLauncher}), wait for the model while a {@link Monitor} shows the
 * progress, cancel on interruption, Stop or timeout, and remove what the job leaves.
 *
 * <p>A job is built in {@code tmp/<job>/} ({@code data.arrow} or {@code data.arff}, and {@code job.json}),
 * published into {@code new/<job>}, and read back from {@code done/<job>} ({@code model.arrow},
 * {@code result.json}) or {@code failed/<job>} ({@code error.json}); the primitives are in {@link Spool}.
 */
public final class SpoolClient {

  static final long POLL_MILLIS = 200;
  /** The shortest wait between two looks at a job (the daemon's config.BRISK_POLL_SECONDS). */
  static final long BRISK_POLL_MILLIS = 10;
  static final long PROGRESS_LOG_MILLIS = 5000;
  /**
   * The longest silence on the console (and the status line) while waiting: a line says what is going on. 8 s, so
   * that with the polling and a slow console no gap reaches 10 s (benchmarks/bench_weka_first_run.py measures it).
   */
  static final long STILL_MILLIS = 8_000;
  static final long MONITOR_MILLIS = 50;
  /** How long the monitor waits for a cancelled job to reach failed/ before leaving it to sweepCancelled. */
  static final long CLEAN_UP_MILLIS = 120_000;
  /** How long the monitor of a finished job waits for its caller's {@link #cleanUp} before leaving the job be. */
  static final long RELEASE_MILLIS = 600_000;

  /**
   * Milliseconds until the next look at a job that has waited {@code ageMillis}: a tenth of its age, between
   * {@link #BRISK_POLL_MILLIS} and {@link #POLL_MILLIS}, so that a job of a fraction of a second (a fold of a
   * cross-validation) is seen done soon after it is, and a long one costs a look every 0.2 s.
   */
  static long nextLookMillis(long ageMillis) {
    return Math.min(POLL_MILLIS, Math.max(BRISK_POLL_MILLIS, ageMillis / 10));
  }

  private final Path m_Root;
  private final DaemonLauncher m_Launcher;
  private final boolean m_AutoStart;
  private final int m_TimeoutSeconds;
  private final boolean m_Verbose;

  private boolean m_Arff;
  private String m_Job;
  private Path m_Finished;
  private Feedback m_Feedback;
  private Monitor m_Monitor;
  private volatile boolean m_Interrupted;
  private long m_LastAliveCheck;

  /**
   * @param spool the spool directory (created if missing)
   * @param python the Python executable that runs the daemon, or null for the Weka package's own Python
   *          environment ({@link PythonEnvironment}, made when a daemon is first started), or python3 where
   *          the classes do not come from an installed package
   * @param autoStart whether to start a daemon when none is alive
   * @param timeoutSeconds give up after this long (0: never)
   * @param verbose also print progress on stderr
   */
  public SpoolClient(Path spool, String python, boolean autoStart, int timeoutSeconds, boolean verbose) {
    m_Root = spool.toAbsolutePath();
    m_Launcher = new DaemonLauncher(m_Root, python);
    m_AutoStart = autoStart;
    m_TimeoutSeconds = timeoutSeconds;
    m_Verbose = verbose;
    m_Feedback = new Feedback(null, verbose);
    Spool.lookUpHost(); // for Spool.wake, by the time the first job is published
  }

  /** Chooses the jobs' data files: ARFF through Weka's ArffSaver if {@code arff}, else Arrow IPC (the default). */
  public void setArff(boolean arff) {
    m_Arff = arff;
  }

  /** @return the job's name, once published */
  public String jobName() {
    return m_Job;
  }

  /**
   * @return true if the training thread was interrupted during {@link #train} (whatever it then threw: the
   *         interruption may surface as an I/O error of an interruptible channel); the flag itself is cleared
   */
  public boolean wasInterrupted() {
    return m_Interrupted;
  }

  /** @return the monitor of the last job, or null */
  Monitor monitor() {
    return m_Monitor;
  }

  private Path in(String dir, String name) {
    return m_Root.resolve(dir).resolve(name);
  }

  /**
   * Publishes a job: {@code tmp/<job>/data.arrow} (or {@code data.arff}) and {@code job.json}, then one rename into
   * {@code new/}.
   *
   * @param data the training data, class set
   * @param params job.json fields (structure, k, estimator, iterations, burn_in, tying, seed)
   * @return the job's name
   * @throws IOException if the spool cannot be written
   */
  public String publish(Instances data, Map<String, Object> params) throws IOException {
    Spool.create(m_Root);
    Spool.sweepCancelled(m_Root);
    String name = Spool.newJobName();
    Path tmp = in("tmp", name);
    Files.createDirectory(tmp);
    try {
      String dataName = m_Arff ? "data.arff" : "data.arrow";
      Path file = tmp.resolve(dataName);
      if (m_Arff) {
        ArffSaver saver = new ArffSaver();
        saver.setMaxDecimalPlaces(17);
        saver.setInstances(data);
        saver.setFile(file.toFile());
        saver.writeBatch();
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
          ch.force(true);
        }
      } else {
        ArrowFileWriter.write(data, file);
      }
      Map<String, Object> job = new LinkedHashMap<>();
      job.put("protocol", Spool.PROTOCOL);
      job.put("data", dataName);
      job.put("class_attribute", data.classAttribute().name());
      job.putAll(params);
      job.put("client", "Weka HDPBayesNet (java " + System.getProperty("java.version") + ")");
      Spool.writeAtomic(tmp.resolve("job.json"), (Json.write(job) + "\n").getBytes(StandardCharsets.UTF_8));
      Files.move(tmp, in("new", name), StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException | RuntimeException e) {
      Spool.deleteTree(tmp);
      throw e;
    }
    Spool.wake(m_Root); // the daemons of this host look at new/ now, not at their next poll
    m_Job = name;
    return name;
  }

  /**
   * Trains: publish the job, make sure a daemon runs, wait for the model.
   *
   * @param data the training data
   * @param params the job's parameters
   * @return the path of the model file in {@code done/<job>/}
   * @throws Exception with the daemon's message when training fails, or a message that says what to
   *           check when no daemon can be started, the daemon dies, or the timeout passes;
   *           {@link InterruptedException} when the thread is interrupted (the job is cancelled)
   */
  public Path train(Instances data, Map<String, Object> params) throws Exception {
    Thread caller = Thread.currentThread();
    m_Feedback = Feedback.forThread(caller, m_Verbose);
    if (m_AutoStart) { // before publishing: a stale daemon must not claim the job
      m_Launcher.replaceStaleDaemons(m_Feedback);
    }
    String name;
    try {
      name = publish(data, params);
    } catch (IOException e) {
      throw new Exception("HDPBayesNet: cannot write the training job into the spool directory " + m_Root + " ("
        + e + "); choose another one with the spoolDirectory option (-spool) or HDP_BNC_SPOOL", e);
    }
    // from here on, another thread shows the progress and cancels the job the moment this thread is
    // interrupted, stopped or leaves without a model. A Stop ends this thread by an interrupt (the Explorer's
    // Classify panel, PanelStop), or by a single Thread.stop() that can land anywhere, one of this method's
    // handlers included (the Experimenter and the SimpleCLI, which do not interrupt first; the Explorer's
    // other panels). Each handler tells the monitor itself, so that a stop landing in one of them still
    // leaves the other to tell it.
    m_Monitor = new Monitor(name, caller);
    try {
      m_Monitor.start();
      m_Feedback.status("job " + name + " published (" + data.numInstances() + " rows)", false);
      if (m_Verbose) {
        m_Feedback.log("job " + name + " published in " + m_Root + " (" + data.numInstances() + " rows)");
      }
      // a job already claimed (or finished) had a daemon: if that one has died since, await() says so
      if (Spool.liveDaemons(m_Root).isEmpty() && Spool.claimedBy(m_Root, name) == null
        && !Spool.finished(m_Root, name)) {
        if (!m_AutoStart) {
          throw new Exception("HDPBayesNet: no hdp-bnc daemon is running on " + m_Root
            + ", and starting one is switched off (-do-not-start-daemon). Start one with: " + m_Launcher.python()
            + " -m hdp_plugin daemon run " + m_Root);
        }
        m_Launcher.start(name, m_Feedback);
      }
      Path model = await(name);
      m_Monitor.succeeded();
      return model;
    } catch (Throwable e) {
      if (e instanceof InterruptedException || e instanceof ThreadDeath) { // Stop: interrupt(), or stop()
        m_Interrupted = true;
        m_Monitor.stopped();
      }
      m_Monitor.left();
      throw e;
    } finally {
      if (!m_Monitor.hasSucceeded()) { // error, interruption, timeout, or the thread being stopped: cancel the job
        m_Monitor.left();
        if (Thread.interrupted()) { // Weka's panels must not be touched by an interrupted thread
          m_Interrupted = true;
        }
        cancel(name);
      }
    }
  }

  void cancel(String name) {
    try {
      Spool.writeAtomic(in("cancel", name), new byte[0]);
    } catch (IOException | RuntimeException e) {
      // the spool went away (or the marker exists): nothing left to cancel
    }
  }

  private Path await(String name) throws Exception {
    long start = System.nanoTime();
    while (true) {
      Path done = in("done", name);
      if (Files.isRegularFile(done.resolve("result.json"))) { // finished (section 5)
        Path model = done.resolve("model.arrow");
        Object result = Spool.readJson(done.resolve("result.json"));
        if (!Files.isRegularFile(model)) {
          throw new Exception("HDPBayesNet: job " + name + " is done but has no model.arrow (" + done + ")");
        }
        m_Finished = done;
        for (String note : resultNotes(result)) {
          m_Feedback.log(note);
        }
        m_Feedback.log(String.format(Locale.ROOT, "job %s done in %.1f s", name, (System.nanoTime() - start) / 1e9));
        return model;
      }
      Path failed = in("failed", name);
      if (Files.isDirectory(failed)) {
        Object err = null;
        for (int i = 0; i < 10 && err == null; i++) {
          err = Spool.readJson(failed.resolve("error.json"));
          if (err == null) {
            Thread.sleep(50);
          }
        }
        String message = errorMessage(name, err, failed);
        if (err != null && !m_Verbose) { // the client deletes its job once it has what it needs (section 1)
          Spool.deleteTree(failed);
        }
        throw new Exception(message);
      }
      long now = System.nanoTime();
      checkAlive(name);
      if (m_TimeoutSeconds > 0 && (now - start) / 1e9 > m_TimeoutSeconds) {
        throw new Exception("HDPBayesNet: training did not finish within the timeout of " + m_TimeoutSeconds
          + " s; the job " + name + " was cancelled. Check that a daemon serves " + m_Root + " ("
          + m_Launcher.python() + " -m hdp_plugin daemon status " + m_Root + "), or raise -timeout for large data or "
          + "many iterations.");
      }
      try {
        if (Thread.interrupted()) { // thrown with the flag cleared, as sleep() does
          throw new InterruptedException();
        }
        Thread.sleep(nextLookMillis((now - start) / 1_000_000L));
      } catch (InterruptedException e) {
        throw new InterruptedException("HDPBayesNet: training interrupted; job " + name + " cancelled");
      }
    }
  }

  /**
   * The lines a finished job's {@code result.json} gives the log: its warnings, and the members whose SkDB took
   * a smaller model than its best to stay within its table-cell cap ({@code structure.cell_limited},
   * docs/spool-protocol.md section 5).
   *
   * @param result the result document, or null
   * @return the lines, without the "HDPBayesNet: " prefix
   */
  static List<String> resultNotes(Object result) {
    List<String> out = new java.util.ArrayList<>();
    Map<?, ?> r = result instanceof Map ? (Map<?, ?>) result : Map.of();
    if (r.get("warnings") instanceof List) {
      for (Object s : (List<?>) r.get("warnings")) {
        out.add("warning: " + s);
      }
    }
    Map<?, ?> st = r.get("structure") instanceof Map ? (Map<?, ?>) r.get("structure") : Map.of();
    if (st.get("cell_limited") instanceof List && !((List<?>) st.get("cell_limited")).isEmpty()) {
      List<?> limited = (List<?>) st.get("cell_limited");
      StringBuilder which = new StringBuilder();
      java.util.Set<Object> caps = new java.util.TreeSet<>(java.util.Comparator.comparing(String::valueOf));
      for (Object o : limited) {
        Map<?, ?> c = o instanceof Map ? (Map<?, ?>) o : Map.of();
        which.append(which.length() == 0 ? "" : ", ").append(c.get("member"));
        caps.add(c.get("max_cells"));
      }
      StringBuilder cap = new StringBuilder();
      for (Object c : caps) {
        cap.append(cap.length() == 0 ? "" : " or ").append(c);
      }
      Object members = st.get("members");
      out.add("note: " + (Long.valueOf(1).equals(members) ? "the network took a smaller model than its best, to "
        + "stay within " + cap + " table cells" : limited.size() + " of " + members + " members took a smaller model "
        + "than their best, to stay within " + cap + " table cells each: member" + (limited.size() == 1 ? " " : "s ")
        + which) + " (the classifier's output says more)");
    }
    return out;
  }

  /**
   * Fails when the job can no longer finish: its daemon died, or no daemon is left to claim it, or it
   * is nowhere (section 5: done, failed, claimed by some daemon, new; then done and failed once more).
   */
  private void checkAlive(String name) throws Exception {
    long now = System.currentTimeMillis();
    if (now - m_LastAliveCheck < 1000) {
      return;
    }
    m_LastAliveCheck = now;
    for (int look = 0; look < 2; look++) {
      if (Spool.finished(m_Root, name)) {
        return;
      }
      String owner = Spool.claimedBy(m_Root, name);
      if (owner != null) {
        if (!Spool.alive(m_Root, owner) && !Spool.finished(m_Root, name)) {
          throw new Exception("HDPBayesNet: the hdp-bnc daemon " + owner + " died while training job " + name
            + m_Launcher.exitNote() + "; the job was cancelled. Train again to retry" + m_Launcher.logNote());
        }
        return;
      }
      if (Files.isDirectory(in("new", name))) {
        if (Spool.liveDaemons(m_Root).isEmpty()) {
          throw new Exception("HDPBayesNet: no hdp-bnc daemon is left running on " + m_Root + " to train job "
            + name + m_Launcher.exitNote() + m_Launcher.logNote());
        }
        return;
      }
      Thread.sleep(100); // between two renames: look again
    }
    if (!Spool.finished(m_Root, name)) {
      throw new Exception("HDPBayesNet: job " + name + " vanished from the spool " + m_Root);
    }
  }

  /**
   * One line for the log from a progress document (docs/spool-protocol.md section 5).
   *
   * @param p the progress document
   * @return for example "sampling, iteration 1200 of 5000 (attempt 2)"
   */
  static String describeProgress(Map<?, ?> p) {
    Object total = p.get("total");
    Object attempt = p.get("attempt");
    return p.get("phase") + (total instanceof Long && (Long) total > 0 ? ", iteration " + p.get("iteration") + " of "
      + total : "")
      + (attempt instanceof Long && (Long) attempt > 1 ? " (attempt " + attempt + ")" : "");
  }

  static String errorMessage(String name, Object err, Path folder) {
    if (!(err instanceof Map)) {
      return "HDPBayesNet: job " + name + " failed without a readable error.json (" + folder + ")";
    }
    Map<?, ?> e = (Map<?, ?>) err;
    if ("cancelled".equals(e.get("code"))) {
      return "HDPBayesNet: training cancelled (" + e.get("message") + ")";
    }
    return "HDPBayesNet: training failed: " + e.get("message") + " [" + e.get("code") + "]";
  }

  /**
   * Removes the finished job's folder and progress file (after its model was read): the job's monitor does
   * it, on its own thread, so that a Thread.stop() of the caller cannot leave it half done; this thread waits
   * for it.
   */
  public void cleanUp() {
    Monitor m = m_Monitor;
    if (m != null && m.hasSucceeded() && m.isAlive()) {
      m.released();
      boolean interrupted = false;
      while (m.isAlive()) {
        try {
          m.join();
        } catch (InterruptedException e) {
          interrupted = true; // the monitor removes the job in any case
        }
      }
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
    if (m_Finished != null) { // no monitor any more (it left the job be after RELEASE_MILLIS)
      Spool.deleteTree(m_Finished);
    }
    if (m_Job != null) {
      deleteProgress(m_Job);
    }
  }

  private void deleteProgress(String name) {
    try {
      Files.deleteIfExists(in("progress", name + ".json"));
    } catch (IOException e) {
      // the daemon may remove it itself
    }
  }

  /**
   * Watches a job from its own thread: writes the feedback out, shows the daemon's progress (the Explorer's
   * status line; the console every few seconds), and cancels the job as soon as the training thread is
   * interrupted, dies, or leaves {@link #train} without a model; then removes what the cancelled job left
   * in the spool. Weka's Stop button in panels other than the Explorer's Classify panel calls interrupt() and
   * stop() on the training thread almost at once (or stop() alone), so the thread itself cannot be relied on
   * to cancel. Once the job is done, it removes the job when its caller is done with it ({@link #cleanUp}) or
   * has died.
   */
  final class Monitor extends Thread {
    private final String m_Name;
    private final Thread m_Caller;
    private volatile boolean m_Succeeded;
    private volatile boolean m_Released;
    private volatile boolean m_Left;
    private volatile boolean m_Stopped;
    private final long m_Since = System.nanoTime();

    Monitor(String name, Thread caller) {
      super("HDPBayesNet job monitor " + name);
      setDaemon(true);
      m_Name = name;
      m_Caller = caller;
    }

    void succeeded() {
      m_Succeeded = true;
    }

    boolean hasSucceeded() {
      return m_Succeeded;
    }

    /** The caller has read the model: the finished job can go. */
    void released() {
      m_Released = true;
    }

    /** The caller left {@link #train} without a model (it may have been stopped half-way through that). */
    void left() {
      m_Left = true;
    }

    /** The caller was interrupted or stopped. */
    void stopped() {
      m_Stopped = true;
    }

    @Override
    public void run() {
      long lastConsole = System.nanoTime();
      Object last = null;
      long succeededAt = 0;
      while (true) {
        m_Feedback.flush();
        long now = System.nanoTime();
        if (m_Succeeded) {
          // the job is done; the caller reads its model, then cleanUp() hands its removal to this thread. A
          // caller that dies first would leave the folder in done/ for good, so this thread removes it then
          succeededAt = succeededAt == 0 ? now : succeededAt;
          if (m_Released || !m_Caller.isAlive()) {
            Spool.deleteTree(in("done", m_Name));
            deleteProgress(m_Name);
            return;
          }
          if ((now - succeededAt) / 1_000_000 > RELEASE_MILLIS) { // a caller that keeps the job: its business
            return;
          }
        } else if (m_Left || m_Stopped || m_Caller.isInterrupted() || !m_Caller.isAlive()) {
          if (m_Caller.isInterrupted()) {
            m_Interrupted = true;
          }
          cancel(m_Name);
          // stopped (else the training thread's exception says why)
          if (m_Stopped || !m_Left || m_Caller.isInterrupted() || !m_Caller.isAlive()) {
            m_Feedback.log("training stopped: job " + m_Name + " cancelled");
            m_Feedback.status("training stopped", false);
          }
          m_Feedback.flush();
          cleanUpCancelled();
          return;
        } else {
          Object progress = Spool.readJson(in("progress", m_Name + ".json"));
          if (progress instanceof Map && !progress.equals(last)) {
            last = progress;
            boolean console = (now - lastConsole) / 1_000_000 >= PROGRESS_LOG_MILLIS;
            if (console) {
              lastConsole = now;
            }
            m_Feedback.status(describeProgress((Map<?, ?>) progress), console);
          } else if ((now - lastConsole) / 1_000_000 >= STILL_MILLIS && claimedAnywhere()) {
            // no news for a while (a long phase, or kernels compiled where the wheel's do not fit): say so
            lastConsole = now;
            m_Feedback.status((last instanceof Map ? describeProgress((Map<?, ?>) last) : "job " + m_Name + " claimed")
              + String.format(Locale.ROOT, ", still running after %.0f s", (now - m_Since) / 1e9), true);
          }
        }
        try {
          Thread.sleep(MONITOR_MILLIS);
        } catch (InterruptedException e) {
          return;
        }
      }
    }

    /** Waits for the cancelled job to land in failed/ (or done/, if it finished first) and removes it. */
    private void cleanUpCancelled() {
      long end = System.currentTimeMillis() + CLEAN_UP_MILLIS;
      Path failed = in("failed", m_Name);
      Path done = in("done", m_Name);
      int absent = 0;
      try {
        while (System.currentTimeMillis() < end) {
          Object err = Spool.readJson(failed.resolve("error.json"));
          if (Files.isRegularFile(done.resolve("result.json"))) {
            Spool.deleteTree(done);
            break;
          }
          if (err instanceof Map) {
            // a cancelled job goes; a job that failed for another reason stays with -output-debug-info
            if (!m_Verbose || Spool.cancelled(err)) {
              Spool.deleteTree(failed);
            }
            break;
          }
          if (!Files.exists(in("new", m_Name)) && !Files.exists(failed) && !Files.exists(done) && !claimedAnywhere()) {
            // between two of the daemon's renames, or removed by the training thread once it read the error:
            // gone for half a second means gone
            if (++absent >= 5) {
              break;
            }
          } else {
            absent = 0;
          }
          Thread.sleep(100);
        }
      } catch (InterruptedException e) {
        // housekeeping only: sweepCancelled removes what is left later
      }
      deleteProgress(m_Name);
    }

    private boolean claimedAnywhere() {
      try {
        return Spool.claimedBy(m_Root, m_Name) != null;
      } catch (IOException e) {
        return true;
      }
    }
  }
}
