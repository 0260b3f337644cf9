/*
 *   This program is free software: you can redistribute it and/or modify
 *   it under the terms of the GNU General Public License as published by
 *   the Free Software Foundation, either version 3 of the License, or
 *   (at your option) any later version.
 */

package weka.classifiers.bayes.hdpbnc;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.text.SimpleDateFormat;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TimeZone;
import java.util.stream.Stream;

import weka.core.Instances;
import weka.core.converters.ArffSaver;

/**
 * The producer side of the hdp-bnc spool protocol, version 1 ({@code docs/spool-protocol.md},
 * {@code hdp_plugin/daemon/protocol.py}): publish a training job, make sure a daemon serves the
 * spool, wait for the model while logging progress, cancel on interruption or timeout.
 *
 * <p>A job is built in {@code tmp/<job>/} ({@code data.arrow} or {@code data.arff}, and {@code job.json}) and
 * published with one atomic rename into {@code new/<job>}; the daemon claims it into {@code claimed/<daemon>/<job>} and
 * finishes it in {@code done/<job>} ({@code model.arrow}, {@code result.json}) or {@code failed/<job>}
 * ({@code error.json}). A daemon is alive while it holds the lock on byte 0 of
 * {@code daemons/<id>.lock}; cancelling is writing the marker {@code cancel/<job>}.
 */
public final class SpoolClient {

  /** The Python used where no other is named and no package environment exists. */
  static final String DEFAULT_PYTHON = "python3";
  /** What to do when the named Python cannot run the daemon. */
  static final String INSTALL_HINT = "Leave the option -python (pythonExecutable in the GUI) at its default and "
    + "HDP_BNC_PYTHON unset to let the installed Weka package make its own Python environment; or install "
    + "hdp_plugin into a Python 3.10 or later with pip (the wheel is in the package's python folder, e.g. "
    + "~/wekafiles/packages/HDPBayesNet/python; from a clone of the repository: python3 -m pip install -e .) and "
    + "point -python or HDP_BNC_PYTHON at that Python.";
  /** The protocol version spoken. */
  public static final int PROTOCOL = 1;
  static final String[] SUBDIRS = {"tmp", "new", "claimed", "done", "failed", "progress", "cancel", "daemons"};
  /** A daemon started from Weka exits after this many idle seconds. */
  public static final int IDLE_EXIT_SECONDS = 600;
  /** Seconds to wait for a started daemon to take its lock. */
  static final int START_SECONDS = 600;
  static final long POLL_MILLIS = 200;
  /** The shortest wait between two looks at a job (the daemon's config.BRISK_POLL_SECONDS). */
  static final long BRISK_POLL_MILLIS = 10;
  /** The longest wait for the loopback connection that nudges a daemon (the daemon's config.WAKE_CONNECT_SECONDS). */
  static final int WAKE_CONNECT_MILLIS = 200;
  /** The largest heartbeat read for its wake-up port (the daemon's documents are a few hundred bytes). */
  static final long MAX_HEARTBEAT_BYTES = 1 << 20;

  /**
   * Milliseconds until the next look at a job that has waited {@code ageMillis}: a tenth of its age, between
   * {@link #BRISK_POLL_MILLIS} and {@link #POLL_MILLIS}, so that a job of a fraction of a second (a fold of a
   * cross-validation) is seen done soon after it is, and a long one costs a look every 0.2 s.
   */
  static long nextLookMillis(long ageMillis) {
    return Math.min(POLL_MILLIS, Math.max(BRISK_POLL_MILLIS, ageMillis / 10));
  }
  static final long PROGRESS_LOG_MILLIS = 5000;
  /**
   * The longest silence on the console (and the status line) while waiting: a line says what is going on. 8 s, so
   * that with the polling and a slow console no gap reaches 10 s (benchmarks/bench_weka_first_run.py measures it).
   */
  static final long STILL_MILLIS = 8_000;
  /** How long to wait for a daemon of another environment or version to stop once asked to. */
  static final long REPLACE_MILLIS = 120_000;
  static final long MONITOR_MILLIS = 50;
  /** How long the monitor waits for a cancelled job to reach failed/ before leaving it to sweepCancelled. */
  static final long CLEAN_UP_MILLIS = 120_000;

  private final Path m_Root;
  private String m_Python;
  private final boolean m_AutoStart;
  private final int m_TimeoutSeconds;
  private final boolean m_Verbose;

  private boolean m_Arff;
  private String m_Job;
  private Path m_Finished;
  private Process m_Started;
  private Path m_DaemonLog;
  private Feedback m_Feedback;
  private Monitor m_Monitor;

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
    m_Python = python;
    m_AutoStart = autoStart;
    m_TimeoutSeconds = timeoutSeconds;
    m_Verbose = verbose;
    m_Feedback = new Feedback(null, verbose);
    lookUpHost(); // for wake(), by the time the first job is published
  }

  /**
   * Chooses the data file format of the jobs: ARFF through Weka's ArffSaver, or (the default) Arrow IPC.
   *
   * @param arff true for ARFF
   */
  public void setArff(boolean arff) {
    m_Arff = arff;
  }

  /** @return the job's name, once published */
  public String jobName() {
    return m_Job;
  }

  private void log(String msg) {
    m_Feedback.log(msg);
  }

  /**
   * Sets where messages go (by default: found from the thread that calls {@link #train}).
   *
   * @param feedback the feedback
   */
  public void setFeedback(Feedback feedback) {
    m_Feedback = feedback;
    m_FeedbackGiven = true;
  }

  // ------------------------------------------------------------------------------------------
  // the spool
  // ------------------------------------------------------------------------------------------

  /**
   * Creates the spool and its sub-directories, private to the user where the file system allows.
   *
   * @param root the spool
   * @throws IOException if it cannot be created
   */
  public static void createSpool(Path root) throws IOException {
    boolean posix = FileSystems.getDefault().supportedFileAttributeViews().contains("posix");
    if (!Files.isDirectory(root)) {
      if (posix) {
        Files.createDirectories(root, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString(
          "rwx------")));
      } else {
        Files.createDirectories(root);
      }
    }
    for (String d : SUBDIRS) {
      Path p = root.resolve(d);
      if (!Files.isDirectory(p)) {
        try {
          if (posix) {
            Files.createDirectory(p, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString(
              "rwx------")));
          } else {
            Files.createDirectory(p);
          }
        } catch (java.nio.file.FileAlreadyExistsException e) {
          // another producer or the daemon made it
        }
      }
    }
  }

  /**
   * Is the daemon that owns this lock file alive? Answered by trying its lock (byte 0, exclusive), as
   * {@code daemon_alive} in protocol.py.
   *
   * @param lock {@code daemons/<id>.lock}
   * @return true if a process holds the lock
   */
  static boolean lockHeld(Path lock) {
    try (FileChannel ch = FileChannel.open(lock, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      FileLock l = ch.tryLock(0, 1, false);
      if (l == null) {
        return true;
      }
      l.release();
      return false;
    } catch (NoSuchFileException e) {
      return false;
    } catch (OverlappingFileLockException e) {
      return true;
    } catch (IOException e) {
      return true; // cannot tell: assume alive, as protocol.py does
    }
  }

  /**
   * Is daemon {@code id} alive? Its lock says so (section 6); for a daemon on another host, whose
   * lock may not be visible through a network file system, a heartbeat younger than five intervals.
   *
   * @param root the spool
   * @param id the daemon's id
   * @return true if alive
   */
  static boolean alive(Path root, String id) {
    if (lockHeld(root.resolve("daemons").resolve(id + ".lock"))) {
      return true;
    }
    Object beat = readJson(root.resolve("daemons").resolve(id + ".json"));
    if (!(beat instanceof Map)) {
      return false;
    }
    Map<?, ?> h = (Map<?, ?>) beat;
    Object host = h.get("host");
    if (!(host instanceof String) || shortHost((String) host).equalsIgnoreCase(shortHost(localHost()))) {
      return false; // on this host the lock is the truth
    }
    Object at = h.get("heartbeat_unix");
    Object every = h.get("heartbeat_seconds");
    double interval = every instanceof Number ? ((Number) every).doubleValue() : 2.0;
    return at instanceof Number
      && System.currentTimeMillis() / 1000.0 - ((Number) at).doubleValue() < 5 * interval;
  }

  private static String shortHost(String host) {
    int dot = host.indexOf('.');
    return dot < 0 ? host : host.substring(0, dot);
  }

  private static String localHost() {
    try {
      return java.net.InetAddress.getLocalHost().getHostName();
    } catch (IOException e) {
      return "";
    }
  }

  /** This host's name for {@link #wake}, once looked up (null until then). */
  private static volatile String s_LocalHost;
  private static final java.util.concurrent.atomic.AtomicBoolean s_HostLookup =
    new java.util.concurrent.atomic.AtomicBoolean();

  /** @return true once this host's name is known ({@link #lookUpHost}) */
  static boolean hostKnown() {
    return s_LocalHost != null;
  }

  /**
   * Looks up this host's name once per JVM, on a thread of its own: {@code InetAddress.getLocalHost()} asks
   * the name service, which takes seconds on some machines (macOS without its name in /etc/hosts), and no
   * job waits for it.
   */
  static void lookUpHost() {
    if (s_HostLookup.compareAndSet(false, true)) {
      Thread t = new Thread(() -> s_LocalHost = localHost(), "HDPBayesNet host name");
      t.setDaemon(true);
      t.start();
    }
  }

  /**
   * Nudges the daemons of this host that serve the spool and listen for it (docs/spool-protocol.md, section
   * 6b): for every heartbeat with a {@code wake_port} and this host's name, a connection to that port of the
   * loopback interface, closed at once. The daemon then looks at {@code new/} at once instead of at its next
   * poll. Never fails and never waits for the host's name ({@link #lookUpHost}: none is nudged until it is
   * known): a daemon not reached finds the job at its next look.
   *
   * @param root the spool
   * @return how many daemons were reached
   */
  static int wake(Path root) {
    lookUpHost();
    String here = s_LocalHost;
    if (here == null) {
      return 0;
    }
    int reached = 0;
    Path dir = root.resolve("daemons");
    try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir, "*.json")) {
      for (Path p : ds) {
        if (p.getFileName().toString().startsWith(".") || !Files.isRegularFile(p)
          || Files.size(p) > MAX_HEARTBEAT_BYTES) {
          continue; // not a heartbeat (a FIFO would block the read)
        }
        Object beat = readJson(p);
        if (!(beat instanceof Map)) {
          continue;
        }
        Map<?, ?> h = (Map<?, ?>) beat;
        Object port = h.get("wake_port");
        Object host = h.get("host");
        if (!(port instanceof Long) || ((Long) port) < 1 || ((Long) port) > 65535 || !(host instanceof String)
          || "stopping".equals(h.get("state"))
          || !shortHost((String) host).equalsIgnoreCase(shortHost(here))) {
          continue;
        }
        try (java.net.Socket s = new java.net.Socket()) {
          // 127.0.0.1, where the daemon listens, even where Java would prefer IPv6's ::1 as the loopback address
          java.net.InetAddress loopback = java.net.InetAddress.getByAddress(new byte[] {127, 0, 0, 1});
          s.connect(new java.net.InetSocketAddress(loopback, ((Long) port).intValue()), WAKE_CONNECT_MILLIS);
          reached++;
        } catch (IOException e) {
          // not listening (any more): polling finds the job
        }
      }
    } catch (IOException | RuntimeException e) {
      // no daemons/ to read: nothing to nudge
    }
    return reached;
  }

  /**
   * The ids of the live daemons of a spool.
   *
   * @param root the spool
   * @return the ids (possibly empty)
   */
  public static List<String> liveDaemons(Path root) {
    List<String> out = new ArrayList<>();
    Path dir = root.resolve("daemons");
    if (!Files.isDirectory(dir)) {
      return out;
    }
    try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir, "*.lock")) {
      for (Path p : ds) {
        String f = p.getFileName().toString();
        if (!f.startsWith(".") && alive(root, f.substring(0, f.length() - ".lock".length()))) {
          out.add(f.substring(0, f.length() - ".lock".length()));
        }
      }
    } catch (IOException e) {
      // an unreadable daemons/ means no daemon we can see
    }
    return out;
  }

  /**
   * Asks every live daemon of a spool to stop (the {@code daemons/<id>.stop} marker) and waits for
   * them to go.
   *
   * @param root the spool
   * @param waitMillis how long to wait
   * @return true if no daemon is alive at the end
   * @throws IOException if a marker cannot be written
   * @throws InterruptedException if interrupted while waiting
   */
  public static boolean stopDaemons(Path root, long waitMillis) throws IOException, InterruptedException {
    for (String id : liveDaemons(root)) {
      writeAtomic(root.resolve("daemons").resolve(id + ".stop"), new byte[0]);
    }
    long end = System.currentTimeMillis() + waitMillis;
    while (!liveDaemons(root).isEmpty()) {
      if (System.currentTimeMillis() > end) {
        return false;
      }
      Thread.sleep(100);
    }
    return true;
  }

  static void writeAtomic(Path target, byte[] data) throws IOException {
    Path tmp = target.resolveSibling("." + target.getFileName() + "." + ProcessHandle.current().pid() + "."
      + System.nanoTime() + ".tmp");
    try {
      try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
        ch.write(java.nio.ByteBuffer.wrap(data));
        ch.force(true);
      }
      try {
        Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      } catch (AtomicMoveNotSupportedException e) {
        Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
      }
    } finally {
      Files.deleteIfExists(tmp);
    }
  }

  /**
   * Removes the folders of Weka jobs that failed because their client cancelled them: the client
   * stopped waiting when it cancelled, so nobody else will read them (the daemon never deletes). Only
   * folders older than a minute go, so that a client still waiting on a job someone else cancelled
   * reads its error first.
   *
   * @param root the spool
   */
  static void sweepCancelled(Path root) {
    try (DirectoryStream<Path> ds = Files.newDirectoryStream(root.resolve("failed"), "weka-*")) {
      for (Path job : ds) {
        Object err = readJson(job.resolve("error.json"));
        long age = System.currentTimeMillis() - Files.getLastModifiedTime(job).toMillis();
        // a minute of grace: a client still waiting (cancelled by someone else) reads it within a second
        if (age > 60_000 && err instanceof Map && "cancelled".equals(((Map<?, ?>) err).get("code"))) {
          deleteTree(job);
        }
      }
    } catch (IOException e) {
      // housekeeping only
    }
  }

  static Object readJson(Path p) {
    try {
      return Json.parse(new String(Files.readAllBytes(p), StandardCharsets.UTF_8));
    } catch (IOException | IllegalArgumentException e) {
      return null; // missing, or being replaced
    }
  }

  static String newJobName() {
    SimpleDateFormat f = new SimpleDateFormat("yyyyMMdd'T'HHmmss'Z'", Locale.ROOT);
    f.setTimeZone(TimeZone.getTimeZone("UTC"));
    byte[] r = new byte[4];
    new SecureRandom().nextBytes(r);
    StringBuilder hex = new StringBuilder();
    for (byte b : r) {
      hex.append(String.format("%02x", b & 0xff));
    }
    return "weka-" + f.format(new Date()) + "-" + ProcessHandle.current().pid() + "-" + hex;
  }

  // ------------------------------------------------------------------------------------------
  // one job
  // ------------------------------------------------------------------------------------------

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
    createSpool(m_Root);
    sweepCancelled(m_Root);
    String name = newJobName();
    Path tmp = m_Root.resolve("tmp").resolve(name);
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
      job.put("protocol", PROTOCOL);
      job.put("data", dataName);
      job.put("class_attribute", data.classAttribute().name());
      job.putAll(params);
      job.put("client", "Weka HDPBayesNet (java " + System.getProperty("java.version") + ")");
      writeAtomic(tmp.resolve("job.json"), (Json.write(job) + "\n").getBytes(StandardCharsets.UTF_8));
      Files.move(tmp, m_Root.resolve("new").resolve(name), StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException | RuntimeException e) {
      deleteTree(tmp);
      throw e;
    }
    wake(m_Root); // the daemons of this host look at new/ now, not at their next poll
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
    if (!m_FeedbackGiven) {
      m_Feedback = Feedback.forThread(caller, m_Verbose);
    }
    if (m_AutoStart) { // before publishing: a stale daemon must not claim the job
      replaceStaleDaemons();
    }
    String name;
    try {
      name = publish(data, params);
    } catch (IOException e) {
      throw new Exception("HDPBayesNet: cannot write the training job into the spool directory " + m_Root + " ("
        + e + "); choose another one with the spoolDirectory option (-spool) or HDP_BNC_SPOOL", e);
    }
    // from here on, another thread shows the progress and cancels the job the moment this thread is
    // interrupted, stopped (Thread.stop skips finally blocks half-way) or leaves without a model
    m_Monitor = new Monitor(name, caller);
    m_Monitor.start();
    m_Feedback.status("job " + name + " published (" + data.numInstances() + " rows)", false);
    if (m_Verbose) {
      log("job " + name + " published in " + m_Root + " (" + data.numInstances() + " rows)");
    }
    boolean finished = false;
    try {
      // a job already claimed (or finished) had a daemon: if that one has died since, await() says so
      if (liveDaemons(m_Root).isEmpty() && claimedBy(name) == null && !finished(name)) {
        if (!m_AutoStart) {
          throw new Exception("HDPBayesNet: no hdp-bnc daemon is running on " + m_Root
            + ", and starting one is switched off (-do-not-start-daemon). Start one with: "
            + (m_Python == null ? DEFAULT_PYTHON : m_Python)
            + " -m hdp_plugin.daemon run " + m_Root);
        }
        startDaemon();
      }
      Path model = await(name);
      finished = true;
      m_Monitor.succeeded();
      return model;
    } catch (InterruptedException | ThreadDeath e) { // Stop in the Explorer: interrupt(), then stop()
      m_Interrupted = true;
      m_Monitor.stopped();
      throw e;
    } finally {
      if (!finished) { // error, interruption, timeout, or the thread being stopped: cancel the job
        m_Monitor.left();
        if (Thread.interrupted()) { // Weka's panels must not be touched by an interrupted thread
          m_Interrupted = true;
        }
        cancel(name);
      }
    }
  }

  private boolean m_FeedbackGiven;
  private volatile boolean m_Interrupted;

  /**
   * @return true if the training thread was interrupted during {@link #train} (whatever it then threw: the
   *         interruption may surface as an I/O error of an interruptible channel); the flag itself is cleared
   */
  public boolean wasInterrupted() {
    return m_Interrupted;
  }

  void cancel(String name) {
    try {
      writeAtomic(m_Root.resolve("cancel").resolve(name), new byte[0]);
    } catch (IOException | RuntimeException e) {
      // the spool went away (or the marker exists): nothing left to cancel
    }
  }

  /** @return the monitor of the last job, or null */
  Monitor monitor() {
    return m_Monitor;
  }

  /**
   * Watches a job from its own thread: writes the feedback out, shows the daemon's progress (the Explorer's
   * status line; the console every few seconds), and cancels the job as soon as the training thread is
   * interrupted, dies, or leaves {@link #train} without a model; then removes what the cancelled job left
   * in the spool. Weka's Stop button calls interrupt() and stop() on the training thread almost at once,
   * so the thread itself cannot be relied on to cancel.
   */
  final class Monitor extends Thread {
    private final String m_Name;
    private final Thread m_Caller;
    private volatile boolean m_Succeeded;
    private volatile boolean m_Released;
    private volatile boolean m_Left;
    private volatile boolean m_Stopped;
    private volatile boolean m_CleanedUp;
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

    /** The caller has read the model and removed the finished job ({@link SpoolClient#cleanUp}). */
    void released() {
      m_Released = true;
    }

    void left() {
      m_Left = true;
    }

    void stopped() {
      m_Stopped = true;
    }

    /** @return true once a cancelled job's folders are gone */
    boolean cleanedUp() {
      return m_CleanedUp;
    }

    @Override
    public void run() {
      long lastConsole = System.nanoTime();
      long lastStack = 0;
      Object last = null;
      long succeededAt = 0;
      while (true) {
        m_Feedback.flush();
        if (m_Succeeded) {
          // the job is done; the caller reads its model, then cleanUp() removes the job's folder. A Stop
          // (Thread.stop) can end the caller between the two, or half-way through the removal: then the
          // folder would stay in done/ for good, so this thread removes it once the caller is gone
          if (m_Released) {
            return;
          }
          long now = System.nanoTime();
          succeededAt = succeededAt == 0 ? now : succeededAt;
          boolean left = !m_Caller.isAlive();
          if (!left && (now - lastStack) / 1_000_000 > 500) {
            lastStack = now;
            left = !inBuild(m_Caller);
          }
          if (left && !m_Released) {
            deleteTree(m_Root.resolve("done").resolve(m_Name));
            try {
              Files.deleteIfExists(m_Root.resolve("progress").resolve(m_Name + ".json"));
            } catch (IOException e) {
              // the daemon may remove it itself
            }
            return;
          }
          if ((now - succeededAt) / 1_000_000 > RELEASE_MILLIS) { // a caller that keeps the job: its business
            return;
          }
          sleepQuietly(MONITOR_MILLIS);
          continue;
        }
        long now = System.nanoTime();
        boolean gone = m_Left || m_Caller.isInterrupted() || !m_Caller.isAlive();
        if (!gone && (now - lastStack) / 1_000_000 > 500) { // stopped half-way through a finally block
          lastStack = now;
          gone = !inTrain(m_Caller) && !m_Succeeded;
        }
        if (gone) {
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
        }
        Object progress = readJson(m_Root.resolve("progress").resolve(m_Name + ".json"));
        if (progress instanceof Map && !progress.equals(last)) {
          last = progress;
          boolean console = (now - lastConsole) / 1_000_000 >= PROGRESS_LOG_MILLIS;
          if (console) {
            lastConsole = now;
          }
          m_Feedback.status(describeProgress((Map<?, ?>) progress), console);
        } else if ((now - lastConsole) / 1_000_000 >= STILL_MILLIS && claimedAnywhere()) {
          // no news for a while (the first job compiles the kernels it needs): say so, console and status line
          lastConsole = now;
          m_Feedback.status((last instanceof Map ? describeProgress((Map<?, ?>) last) : "job " + m_Name + " claimed")
            + String.format(Locale.ROOT, ", still running after %.0f s", (now - m_Since) / 1e9), true);
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
      Path failed = m_Root.resolve("failed").resolve(m_Name);
      Path done = m_Root.resolve("done").resolve(m_Name);
      int absent = 0;
      try {
        while (System.currentTimeMillis() < end) {
          Object err = readJson(failed.resolve("error.json"));
          if (Files.isRegularFile(done.resolve("result.json"))) {
            deleteTree(done);
            break;
          }
          if (err instanceof Map) {
            // a cancelled job goes; a job that failed for another reason stays with -output-debug-info
            if (!m_Verbose || "cancelled".equals(((Map<?, ?>) err).get("code"))) {
              deleteTree(failed);
            }
            break;
          }
          if (!Files.exists(m_Root.resolve("new").resolve(m_Name)) && !Files.exists(failed) && !Files.exists(done)
            && !claimedAnywhere()) {
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
        Files.deleteIfExists(m_Root.resolve("progress").resolve(m_Name + ".json"));
      } catch (InterruptedException | IOException e) {
        // housekeeping only: sweepCancelled removes what is left later
      }
      m_CleanedUp = true;
    }

    private boolean claimedAnywhere() {
      try {
        return claimedBy(m_Name) != null;
      } catch (IOException e) {
        return true;
      }
    }
  }

  /** @return true if the thread is inside {@link #train} (or its stack cannot be read) */
  /** How long the monitor of a finished job waits for its caller's {@link #cleanUp} before leaving the job be. */
  static final long RELEASE_MILLIS = 600_000;

  /**
   * @return true while {@code t} is still inside {@link #train} or {@link #cleanUp}, or in the code between them
   *         (anything of this package or of the classifier on its stack)
   */
  static boolean inBuild(Thread t) {
    return onStack(t, e -> e.getClassName().startsWith("weka.classifiers.bayes.hdpbnc.")
      || e.getClassName().equals("weka.classifiers.bayes.HDPBayesNet"));
  }

  private static void sleepQuietly(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  static boolean inTrain(Thread t) {
    return onStack(t, e -> e.getClassName().equals(SpoolClient.class.getName()) && e.getMethodName().equals("train"));
  }

  /** @return true if a frame of {@code t}'s stack matches (an empty stack: whether {@code t} is alive) */
  private static boolean onStack(Thread t, java.util.function.Predicate<StackTraceElement> frame) {
    StackTraceElement[] stack = t.getStackTrace();
    if (stack.length == 0) {
      return t.isAlive();
    }
    for (StackTraceElement e : stack) {
      if (frame.test(e)) {
        return true;
      }
    }
    return false;
  }

  private Path await(String name) throws Exception {
    long start = System.nanoTime();
    while (true) {
      Path done = m_Root.resolve("done").resolve(name);
      if (Files.isRegularFile(done.resolve("result.json"))) { // finished (section 5)
        Path model = done.resolve("model.arrow");
        Object result = readJson(done.resolve("result.json"));
        if (!Files.isRegularFile(model)) {
          throw new Exception("HDPBayesNet: job " + name + " is done but has no model.arrow (" + done + ")");
        }
        m_Finished = done;
        if (result instanceof Map) {
          Object w = ((Map<?, ?>) result).get("warnings");
          if (w instanceof List) {
            for (Object s : (List<?>) w) {
              log("warning: " + s);
            }
          }
        }
        log(String.format(Locale.ROOT, "job %s done in %.1f s", name, (System.nanoTime() - start) / 1e9));
        return model;
      }
      Path failed = m_Root.resolve("failed").resolve(name);
      if (Files.isDirectory(failed)) {
        Object err = null;
        for (int i = 0; i < 10 && err == null; i++) {
          err = readJson(failed.resolve("error.json"));
          if (err == null) {
            Thread.sleep(50);
          }
        }
        String message = errorMessage(name, err, failed);
        if (err != null && !m_Verbose) { // the client deletes its job once it has what it needs (section 1)
          deleteTree(failed);
        }
        throw new Exception(message);
      }
      long now = System.nanoTime();
      checkAlive(name);
      if (m_TimeoutSeconds > 0 && (now - start) / 1e9 > m_TimeoutSeconds) {
        throw new Exception("HDPBayesNet: training did not finish within the timeout of " + m_TimeoutSeconds
          + " s; the job " + name + " was cancelled. Check that a daemon serves " + m_Root + " ("
          + m_Python + " -m hdp_plugin.daemon status " + m_Root + "), or raise -timeout for large data or "
          + "many iterations.");
      }
      if (Thread.interrupted()) { // thrown with the flag cleared, as sleep() does
        throw new InterruptedException("HDPBayesNet: training interrupted; job " + name + " cancelled");
      }
      try {
        Thread.sleep(nextLookMillis((now - start) / 1_000_000L));
      } catch (InterruptedException e) {
        throw new InterruptedException("HDPBayesNet: training interrupted; job " + name + " cancelled");
      }
    }
  }

  private long m_LastAliveCheck;

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
      if (finished(name)) {
        return;
      }
      String owner = claimedBy(name);
      if (owner != null) {
        if (!alive(m_Root, owner) && !finished(name)) {
          throw new Exception("HDPBayesNet: the hdp-bnc daemon " + owner + " died while training job " + name
            + daemonExit() + "; the job was cancelled. Train again to retry" + logHint());
        }
        return;
      }
      if (Files.isDirectory(m_Root.resolve("new").resolve(name))) {
        if (liveDaemons(m_Root).isEmpty()) {
          throw new Exception("HDPBayesNet: no hdp-bnc daemon is left running on " + m_Root + " to train job "
            + name + daemonExit() + logHint());
        }
        return;
      }
      Thread.sleep(100); // between two renames: look again
    }
    if (!finished(name)) {
      throw new Exception("HDPBayesNet: job " + name + " vanished from the spool " + m_Root);
    }
  }

  private boolean finished(String name) {
    return Files.isDirectory(m_Root.resolve("done").resolve(name))
      || Files.isDirectory(m_Root.resolve("failed").resolve(name));
  }

  /** @return the id of the daemon whose claimed/ folder holds the job, or null */
  private String claimedBy(String name) throws IOException {
    Path claimed = m_Root.resolve("claimed");
    if (!Files.isDirectory(claimed)) {
      return null;
    }
    try (Stream<Path> s = Files.list(claimed)) {
      return s.filter(d -> Files.isDirectory(d.resolve(name))).map(d -> d.getFileName().toString()).findFirst()
        .orElse(null);
    }
  }

  private String daemonExit() {
    if (m_Started != null && !m_Started.isAlive()) {
      return " (the daemon started from Weka exited with code " + m_Started.exitValue() + ")";
    }
    return "";
  }

  private String logHint() {
    if (m_DaemonLog == null) {
      return ".";
    }
    String tail = tail(m_DaemonLog, 8);
    return ". Daemon log " + m_DaemonLog + (tail.isEmpty() ? "." : ":\n" + tail);
  }

  static String tail(Path p, int lines) {
    try {
      List<String> all = Files.readAllLines(p, StandardCharsets.UTF_8);
      return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
    } catch (IOException | RuntimeException e) {
      return "";
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

  static String errorMessage(String name, Object err, Path folder) {
    if (!(err instanceof Map)) {
      return "HDPBayesNet: job " + name + " failed without a readable error.json (" + folder + ")";
    }
    Map<?, ?> e = (Map<?, ?>) err;
    Object code = e.get("code");
    Object msg = e.get("message");
    if ("cancelled".equals(code)) {
      return "HDPBayesNet: training cancelled (" + msg + ")";
    }
    return "HDPBayesNet: training failed: " + msg + " [" + code + "]";
  }

  // ------------------------------------------------------------------------------------------
  // daemons of another environment or version
  // ------------------------------------------------------------------------------------------

  /** hdp_plugin's version in each Python asked, by executable (asked once per JVM). */
  private static final Map<String, String> s_Versions = new java.util.concurrent.ConcurrentHashMap<>();

  /**
   * The hdp_plugin version the daemon this client would start runs: the version of the package's wheel
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
    String python = m_Python == null ? DEFAULT_PYTHON : m_Python;
    String known = s_Versions.get(python);
    if (known != null) {
      return known.isEmpty() ? null : known;
    }
    String version = "";
    try {
      Process p = new ProcessBuilder(python, "-c", "import hdp_plugin._version as v; print(v.__version__)")
        .directory(m_Root.toFile()).redirectErrorStream(true).start();
      p.getOutputStream().close();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
      if (p.waitFor(60, java.util.concurrent.TimeUnit.SECONDS) && p.exitValue() == 0 && out.matches("[0-9A-Za-z.+!_-]+")) {
        version = out;
      }
      p.destroy();
    } catch (IOException e) {
      // cannot tell: starting it will say why
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    }
    s_Versions.put(python, version);
    return version.isEmpty() ? null : version;
  }

  /**
   * Why a live daemon of this host should be replaced, from its heartbeat: its Python no longer exists (its
   * environment was deleted, as uninstalling the Weka package does), it runs another hdp_plugin version than
   * the daemon this client would start, or it runs the package's own environment as it was before that
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
    Object host = h.get("host");
    if (!(host instanceof String) || !shortHost((String) host).equalsIgnoreCase(shortHost(localHost()))) {
      return null; // another host's paths cannot be checked from here
    }
    Object python = h.get("python");
    if (python instanceof String && !((String) python).isEmpty()) {
      try {
        if (!Files.exists(java.nio.file.Paths.get((String) python))) {
          return "runs a Python that no longer exists (" + python + ")";
        }
      } catch (java.nio.file.InvalidPathException e) {
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
        if (java.nio.file.Paths.get((String) python).toAbsolutePath().normalize().startsWith(env.toAbsolutePath()
          .normalize()) && Files.getLastModifiedTime(env.resolve(PythonEnvironment.MARKER)).toMillis() / 1000.0
            > ((Number) started).doubleValue()) {
          return "runs the package's Python environment as it was before it was made again";
        }
      } catch (IOException | java.nio.file.InvalidPathException e) {
        // no marker: nothing to compare
      }
    }
    return null;
  }

  /**
   * Asks the live daemons of this host that run another environment or version ({@link #staleReason}) to
   * stop (the {@code daemons/<id>.stop} marker: they put unfinished jobs back) and waits for them to go,
   * so that this client starts a daemon of its own.
   *
   * @throws InterruptedException if interrupted while waiting
   */
  void replaceStaleDaemons() throws InterruptedException {
    List<String> live = liveDaemons(m_Root);
    if (live.isEmpty()) {
      return;
    }
    String version = null;
    boolean asked = false;
    List<String> stale = new ArrayList<>();
    for (String id : live) {
      Object beat = readJson(m_Root.resolve("daemons").resolve(id + ".json"));
      if (!asked && beat instanceof Map && ((Map<?, ?>) beat).get("version") instanceof String) {
        version = startedVersion();
        asked = true;
      }
      String why = staleReason(beat, version);
      if (why != null) {
        log("the hdp-bnc daemon " + id + " on " + m_Root + " " + why + ": asking it to stop, to start one of this "
          + "installation");
        try {
          writeAtomic(m_Root.resolve("daemons").resolve(id + ".stop"), new byte[0]);
          stale.add(id);
        } catch (IOException e) {
          log("cannot ask the daemon " + id + " to stop (" + e + ")");
        }
      }
    }
    long start = System.currentTimeMillis();
    long told = start;
    while (!stale.isEmpty() && System.currentTimeMillis() - start < REPLACE_MILLIS) {
      stale.removeIf(id -> !alive(m_Root, id));
      if (System.currentTimeMillis() - told >= STILL_MILLIS && !stale.isEmpty()) {
        told = System.currentTimeMillis();
        log("waiting for the daemon " + String.join(", ", stale) + " to stop (it finishes or puts back its jobs; "
          + (told - start) / 1000 + " s)");
      }
      Thread.sleep(100);
    }
  }

  // ------------------------------------------------------------------------------------------
  // starting a daemon
  // ------------------------------------------------------------------------------------------

  /**
   * Starts {@code python -m hdp_plugin.daemon run SPOOL --idle-exit 600} (no shell, as section 6 of
   * docs/spool-protocol.md says) and waits for its heartbeat: state running, every worker ready.
   *
   * @throws Exception naming the Python and what to install when it cannot start
   */
  void startDaemon() throws Exception {
    if (m_Python == null) {
      Path dir = PythonEnvironment.packageDir();
      m_Python = dir != null ? PythonEnvironment.ensure(dir, m_Feedback) : DEFAULT_PYTHON;
    }
    List<String> cmd = new ArrayList<>();
    cmd.add(m_Python);
    cmd.add("-m");
    cmd.add("hdp_plugin.daemon");
    cmd.add("run");
    cmd.add(m_Root.toString());
    cmd.add("--idle-exit");
    cmd.add(Integer.toString(IDLE_EXIT_SECONDS));
    // one log per JVM (appended), in the temporary directory: the spool's layout is fixed by the protocol
    m_DaemonLog = java.nio.file.Paths.get(System.getProperty("java.io.tmpdir"), "hdp-bnc-daemon-"
      + ProcessHandle.current().pid() + ".log");
    ProcessBuilder pb = new ProcessBuilder(cmd);
    // not Weka's working directory: `python -m` imports from it first, and a folder named hdp_plugin there
    // (a clone of the repository) would shadow the installed package
    pb.directory(m_Root.toFile());
    pb.redirectErrorStream(true);
    pb.redirectOutput(ProcessBuilder.Redirect.appendTo(m_DaemonLog.toFile()));
    log("starting the hdp-bnc daemon: " + String.join(" ", cmd) + " (log: " + m_DaemonLog + "). The first start "
      + "after installing compiles the sampler's kernels once (the daemon's log says how long); later starts "
      + "take seconds.");
    try {
      m_Started = pb.start();
      m_Started.getOutputStream().close(); // the daemon reads no input
    } catch (IOException e) {
      throw new Exception("HDPBayesNet: cannot run the Python executable '" + m_Python + "' (" + e.getMessage()
        + "). " + INSTALL_HINT, e);
    }
    long end = System.currentTimeMillis() + START_SECONDS * 1000L;
    long lastLine = System.currentTimeMillis();
    // ready when its heartbeat says so, or as soon as it has taken our job (heartbeats come every 2 s)
    while (!anyDaemonReady() && (m_Job == null || Files.isDirectory(m_Root.resolve("new").resolve(m_Job)))) {
      if (!m_Started.isAlive()) {
        String tail = tail(m_DaemonLog, 6);
        String hint = tail.contains("No module named") ? " The hdp_plugin Python package is not installed for '"
          + m_Python + "'. " + INSTALL_HINT : "";
        throw new Exception("HDPBayesNet: the hdp-bnc daemon did not start ('" + String.join(" ", cmd)
          + "' exited with code " + m_Started.exitValue() + ")." + hint + (tail.isEmpty() ? "" : "\n" + tail));
      }
      long waited = (System.currentTimeMillis() - (end - START_SECONDS * 1000L)) / 1000;
      String waiting = "waiting for the daemon to get ready (" + waited + " s; the first start compiles its kernels)";
      if (System.currentTimeMillis() - lastLine >= STILL_MILLIS) { // a line on the console too, and its log's news
        lastLine = System.currentTimeMillis();
        String news = tail(m_DaemonLog, 1).trim();
        log(waiting + (news.isEmpty() ? "" : "; its log: " + news));
      }
      m_Feedback.status(waiting, false);
      if (System.currentTimeMillis() > end) {
        m_Started.destroy();
        throw new Exception("HDPBayesNet: the hdp-bnc daemon did not get ready within " + START_SECONDS
          + " s; see its log " + m_DaemonLog);
      }
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        throw new InterruptedException("HDPBayesNet: training interrupted while the hdp-bnc daemon was starting; job "
          + m_Job + " cancelled");
      }
    }
  }

  /** @return true if a live daemon's heartbeat says it is running with every worker ready */
  private boolean anyDaemonReady() {
    for (String id : liveDaemons(m_Root)) {
      if (heartbeatReady(readJson(m_Root.resolve("daemons").resolve(id + ".json")))) {
        return true;
      }
    }
    return false;
  }

  /** @return the daemon process started by this client, or null */
  public Process startedDaemon() {
    return m_Started;
  }

  /** Removes the finished job's folder and progress file (after its model was read). */
  public void cleanUp() {
    if (m_Finished != null) {
      deleteTree(m_Finished);
    }
    if (m_Monitor != null && !Files.exists(m_Root.resolve("done").resolve(m_Job == null ? "" : m_Job))) {
      m_Monitor.released();
    }
    if (m_Job != null) {
      try {
        Files.deleteIfExists(m_Root.resolve("progress").resolve(m_Job + ".json"));
      } catch (IOException e) {
        // the daemon may remove it itself
      }
    }
  }

  static void deleteTree(Path p) {
    if (!Files.exists(p)) {
      return;
    }
    try (Stream<Path> s = Files.walk(p)) {
      s.sorted(Comparator.reverseOrder()).forEach(q -> {
        try {
          Files.deleteIfExists(q);
        } catch (IOException e) {
          // best effort
        }
      });
    } catch (IOException e) {
      // best effort
    }
  }
}
