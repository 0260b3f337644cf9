package weka.gui.explorer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.awt.Dialog;
import java.awt.GraphicsEnvironment;
import java.awt.Window;
import java.lang.reflect.Field;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;

import javax.swing.JFrame;
import javax.swing.JLabel;
import javax.swing.JOptionPane;
import javax.swing.JTextArea;
import javax.swing.SwingUtilities;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import weka.classifiers.bayes.HDPBayesNet;
import weka.classifiers.bayes.PythonSideAccess;
import weka.classifiers.bayes.hdpbnc.Spool;
import weka.core.Instances;
import weka.gui.LogPanel;
import weka.gui.WekaTaskMonitor;

/**
 * The Explorer as a user drives it (needs a display: {@code xvfb-run}, which tests/test_java_bridge.py uses
 * when Xvfb is installed; skipped, saying so, without one): Start shows the daemon's progress in the
 * status line, and Stop, pressed at random moments (seeded: {@code -Dhdp.stop.seed=N}, default 21) of every
 * phase of a training (the daemon starting, the job queued behind another, sampling, and anywhere in a
 * cross-validation of quick folds, half the presses between its last fold's model and its end, while Weka
 * evaluates it and builds the result and its visualisation in the run thread), never freezes the Explorer,
 * never leaves a dialog, a task counted in the status bar or a stuck Classify panel, never lets a stopped
 * job run to the end, and the next Start always works. {@code -Dhdp.stop.presses=N} sets the number of
 * presses in the cross-validation (default 16).
 *
 * <p>The presses are not steered away from Weka's own code: the run thread runs Swing and AWT code (status
 * messages, the result's text, the visualisation's file chooser, which asks the X11 clipboard), and Weka's
 * {@code Thread.stop()} landing there froze the whole Explorer (the run thread and the event thread waiting
 * for the toolkit's lock, left taken by the stop). For a run of this classifier Stop is an interrupt that the
 * classifier answers in its own code ({@code PanelStop}), so no press can stop the thread half-way through
 * Weka's.
 */
class ExplorerStopIT {

  @TempDir
  static Path s_Spool;
  static final List<Path> s_Spools = new ArrayList<>();

  @AfterAll
  static void stopDaemons() throws Exception {
    for (Path spool : s_Spools) {
      if (Files.isDirectory(spool)) {
        assertTrue(Spool.stopDaemons(spool, 60000), "a daemon is still running on " + spool);
      }
    }
  }

  static Object field(Object target, Class<?> declaring, String name) throws Exception {
    Field f = declaring.getDeclaredField(name);
    f.setAccessible(true);
    return f.get(target);
  }

  static String onEdt(java.util.concurrent.Callable<String> c) throws Exception {
    String[] out = new String[1];
    Exception[] err = new Exception[1];
    SwingUtilities.invokeAndWait(() -> {
      try {
        out[0] = c.call();
      } catch (Exception e) {
        err[0] = e;
      }
    });
    if (err[0] != null) {
      throw err[0];
    }
    return out[0];
  }

  private JFrame m_Frame;
  private ClassifierPanel m_Panel;
  private JLabel m_Status;
  private JTextArea m_Log;
  private WekaTaskMonitor m_Tasks;
  private final Map<String, Integer> m_Presses = new LinkedHashMap<>();

  static HDPBayesNet classifier(Path spool, String... options) throws Exception {
    HDPBayesNet c = new HDPBayesNet();
    c.setOptions(options);
    c.setSpoolDirectory(spool.toFile());
    c.setPythonExecutable(PythonSideAccess.python());
    return c;
  }

  void choose(HDPBayesNet c) throws Exception {
    SwingUtilities.invokeAndWait(() -> m_Panel.m_ClassifierEditor.setValue(c));
  }

  void start() throws Exception {
    SwingUtilities.invokeAndWait(() -> m_Panel.m_StartBut.doClick());
    assertTrue(m_Panel.m_RunThread != null, "Start did nothing");
  }

  /** Presses Stop (interrupt(), then stop() at once), then checks that the panel is ready again. */
  void stop(String phase) throws Exception {
    SwingUtilities.invokeAndWait(() -> m_Panel.m_StopBut.doClick());
    pressed(phase);
  }

  void pressed(String phase) throws Exception {
    m_Presses.merge(phase, 1, Integer::sum);
    String when = "Stop " + m_Presses + " (" + phase + ")";
    awaitPanelReady(when);
    // the status line says the run stopped, never what the run was doing when stopped ("Building model for
    // fold 1...", "saving"); a press after the run's last call into the classifier leaves Weka's own words:
    // "OK" if the run had ended, "Interrupted" if the press landed in Weka's evaluation of the last fold (its
    // run thread's finally block says so for every classifier)
    String status = onEdt(m_Status::getText);
    boolean afterLastFold = phase.endsWith("its end");
    assertTrue(status.equals("HDPBayesNet: stopped") || status.equals("HDPBayesNet: training stopped")
      || status.equals("OK") || (afterLastFold && status.equals("Interrupted")),
      "the status line after " + when + ": " + status);
  }

  /**
   * Presses Stop at once, whatever the run thread is doing (Weka's Swing code included); false if the run
   * had already ended.
   */
  boolean stopNow(String phase) throws Exception {
    boolean[] pressed = new boolean[1];
    SwingUtilities.invokeAndWait(() -> {
      if (m_Panel.m_RunThread != null) {
        m_Panel.m_StopBut.doClick(0); // doClick() would hold the button down for 68 ms before it acts
        pressed[0] = true;
      }
    });
    if (pressed[0]) {
      pressed(phase);
    }
    return pressed[0];
  }

  /**
   * Waits until the cross-validation's last fold's model is back (Weka's status line says it evaluates it)
   * or the run has ended.
   *
   * @return the time then
   */
  long awaitLastFold() throws Exception {
    long end = System.currentTimeMillis() + 120000;
    while (!onEdt(m_Status::getText).startsWith("Evaluating model for fold 10") && m_Panel.m_RunThread != null
      && System.currentTimeMillis() < end) {
      Thread.sleep(2);
    }
    return System.currentTimeMillis();
  }

  /** Fails if a dialog shows (closing it, so that the panel's thread goes on). */
  void noDialog(String when) throws Exception {
    String shown = onEdt(() -> {
      for (Window w : Window.getWindows()) {
        if (w instanceof Dialog && w.isShowing()) {
          String text = "'" + ((Dialog) w).getTitle() + "': " + messageOf(w);
          w.dispose();
          return text;
        }
      }
      return null;
    });
    if (shown != null) {
      fail("a dialog showed after " + when + ": " + shown);
    }
  }

  static String messageOf(java.awt.Container c) {
    for (java.awt.Component k : c.getComponents()) {
      if (k instanceof JOptionPane) {
        return String.valueOf(((JOptionPane) k).getMessage());
      }
      if (k instanceof java.awt.Container) {
        String m = messageOf((java.awt.Container) k);
        if (m != null) {
          return m;
        }
      }
    }
    return null;
  }

  void awaitPanelReady(String when) throws Exception {
    awaitPanelReady(when, 30000);
  }

  void awaitPanelReady(String when, long millis) throws Exception {
    long end = System.currentTimeMillis() + millis;
    // all three: Weka's panel sets them in separate steps when its run ends; CI once looked in between and
    // saw Start on and no run thread with Stop still on
    while (!(onEdt(() -> m_Panel.m_StartBut.isEnabled() + " " + m_Panel.m_StopBut.isEnabled()).equals("true false")
      && m_Panel.m_RunThread == null) && System.currentTimeMillis() < end) {
      noDialog(when);
      Thread.sleep(20);
    }
    Thread.sleep(200); // a dialog shown late
    noDialog(when);
    assertTrue(m_Panel.m_StartBut.isEnabled() && m_Panel.m_RunThread == null, () -> "the Classify panel is stuck after "
      + when + stacks());
    assertFalse(m_Panel.m_StopBut.isEnabled(), when);
    assertEquals(0, (int) (Integer) field(m_Tasks, WekaTaskMonitor.class, "m_ActiveTasks"),
      "Weka's task counter after " + when);
  }

  /**
   * For a failure's message: the stacks of the panel's run thread, of AWT's threads, of every thread in this
   * plug-in's code and of the owner of what the run thread waits for, then who holds the AWT lock.
   */
  String stacks() {
    StringBuilder b = new StringBuilder();
    Thread run = m_Panel.m_RunThread;
    java.lang.management.ThreadInfo info = run == null ? null : java.lang.management.ManagementFactory
      .getThreadMXBean().getThreadInfo(new long[] {run.getId()}, true, true)[0];
    long owner = info == null ? -1 : info.getLockOwnerId();
    for (Map.Entry<Thread, StackTraceElement[]> e : Thread.getAllStackTraces().entrySet()) {
      StackTraceElement[] st = e.getValue();
      boolean ours = e.getKey() == run || e.getKey().getName().startsWith("AWT-");
      for (StackTraceElement f : st) {
        ours |= f.getClassName().contains("hdpbnc") || f.getClassName().contains("HDPBayesNet");
      }
      if (!ours && e.getKey().getId() != owner) {
        continue;
      }
      b.append("\n--- thread '").append(e.getKey().getName()).append("' (").append(e.getKey().getState())
        .append(e.getKey() == run ? ", the panel's run thread" : "").append(')');
      for (StackTraceElement f : st) {
        b.append("\n    at ").append(f);
      }
    }
    try { // needs --add-opens java.desktop/sun.awt=ALL-UNNAMED
      Field lock = Class.forName("sun.awt.SunToolkit").getDeclaredField("AWT_LOCK");
      lock.setAccessible(true);
      b.append("\n--- the AWT lock: ").append(lock.get(null));
    } catch (Exception | LinkageError e) {
      b.append("\n--- the AWT lock: unknown (").append(e).append(')');
    }
    if (info != null) {
      b.append("\n--- the run thread waits for ").append(info.getLockName()).append(", held by '").append(info
        .getLockOwnerName()).append("' (id ").append(owner).append(')');
    }
    return b.toString();
  }

  /** Waits until the spool holds no job (new, claimed, done or failed), as it should after a Stop. */
  static void awaitSpoolEmpty(Path spool, String when) throws Exception {
    long end = System.currentTimeMillis() + 60000;
    List<String> left = jobs(spool);
    while (!left.isEmpty() && System.currentTimeMillis() < end) {
      Thread.sleep(100);
      left = jobs(spool);
    }
    assertTrue(left.isEmpty(), "left in the spool after " + when + ": " + left);
  }

  static List<String> jobs(Path spool) throws Exception {
    List<String> out = new ArrayList<>();
    for (String d : new String[] {"new", "done", "failed", "claimed"}) {
      Path dir = spool.resolve(d);
      if (!Files.isDirectory(dir)) {
        continue;
      }
      try (Stream<Path> s = d.equals("claimed") ? Files.list(dir).flatMap(ExplorerStopIT::list) : Files.list(dir)) {
        s.filter(p -> p.getFileName().toString().startsWith("weka-")).forEach(p -> out.add(spool.relativize(p)
          .toString()));
      }
    }
    return out;
  }

  static Stream<Path> list(Path dir) {
    try {
      return Files.list(dir).collect(java.util.stream.Collectors.toList()).stream();
    } catch (java.io.IOException e) {
      return Stream.empty();
    }
  }

  static Path awaitJobIn(Path spool, String dir, long millis) throws Exception {
    long end = System.currentTimeMillis() + millis;
    while (System.currentTimeMillis() < end) {
      for (String j : jobs(spool)) {
        if (j.startsWith(dir)) {
          return spool.resolve(j);
        }
      }
      Thread.sleep(10);
    }
    return null;
  }

  @Test
  void stopAtRandomMomentsNeverLeavesADialogOrAStuckPanel() throws Exception {
    Assumptions.assumeFalse(GraphicsEnvironment.isHeadless(), "skipped: no display (run under xvfb-run)");
    PythonSideAccess.assumeHdpPlugin();
    long seed = Long.getLong("hdp.stop.seed", 21);
    Random rnd = new Random(seed);
    Instances data = PythonSideAccess.data("vote.arff", "Class");
    m_Frame = new JFrame("Weka Explorer");
    Explorer ex = new Explorer();
    ClassifierPanel[] cp = new ClassifierPanel[1];
    SwingUtilities.invokeAndWait(() -> {
      m_Frame.getContentPane().add(ex);
      m_Frame.setBounds(0, 0, 1000, 700);
      m_Frame.setVisible(true);
      ex.getPreprocessPanel().setInstances(data);
      for (Explorer.ExplorerPanel p : ex.getPanels()) {
        if (p instanceof ClassifierPanel) {
          cp[0] = (ClassifierPanel) p;
        }
      }
      ex.getTabbedPane().setSelectedComponent(cp[0]);
    });
    m_Panel = cp[0];
    m_Status = (JLabel) field(ex.m_LogPanel, LogPanel.class, "m_StatusLab");
    m_Log = (JTextArea) field(ex.m_LogPanel, LogPanel.class, "m_LogText");
    m_Tasks = (WekaTaskMonitor) field(ex.m_LogPanel, LogPanel.class, "m_TaskMonitor");
    s_Spools.add(s_Spool);
    ExecutorService blockers = Executors.newSingleThreadExecutor();
    try {
      // 1. while the daemon starts: each time on a new spool, so that a daemon has to be started
      for (int i = 0; i < 3; i++) {
        Path spool = s_Spool.resolveSibling(s_Spool.getFileName() + "-start-" + i);
        s_Spools.add(spool);
        choose(classifier(spool, "-S", "kdb", "-K", "2", "-I", "10000000"));
        String before = onEdt(m_Log::getText);
        start();
        long end = System.currentTimeMillis() + 30000;
        while (!onEdt(m_Log::getText).substring(before.length()).contains("starting the hdp-bnc daemon")
          && System.currentTimeMillis() < end) {
          Thread.sleep(5);
        }
        Thread.sleep(rnd.nextInt(1500));
        stop("daemon starting");
        awaitSpoolEmpty(spool, "Stop while the daemon started");
        assertTrue(Spool.stopDaemons(spool, 60000));
      }

      // 2. sampling (the first start on this spool shows the progress)
      choose(classifier(s_Spool, "-S", "kdb", "-K", "2", "-I", "10000000"));
      for (int i = 0; i < 6; i++) {
        start();
        Path job = PythonSideAccess.awaitClaimed(s_Spool);
        long end = System.currentTimeMillis() + 180000; // the first sampling on a busy machine with a cold kernel cache
        while (!onEdt(m_Status::getText).contains("iteration") && System.currentTimeMillis() < end) {
          Thread.sleep(20);
        }
        assertTrue(onEdt(m_Status::getText).startsWith("HDPBayesNet: training, iteration")
          || onEdt(m_Status::getText).startsWith("HDPBayesNet: sampling, iteration"), onEdt(m_Status::getText));
        Thread.sleep(rnd.nextInt(2000));
        stop("sampling");
        assertEquals("cancelled", PythonSideAccess.awaitCancelledAndRemoved(s_Spool, job.getFileName().toString()));
      }

      // 3. queued behind another job (the daemon has one worker)
      for (int i = 0; i < 3; i++) {
        HDPBayesNet blocker = classifier(s_Spool, "-S", "kdb", "-K", "2", "-I", "10000000");
        Future<?> running = blockers.submit(() -> {
          blocker.buildClassifier(data);
          return null;
        });
        PythonSideAccess.awaitClaimed(s_Spool);
        start();
        Path queued = awaitJobIn(s_Spool, "new", 30000);
        assertTrue(queued != null, "no job queued");
        Thread.sleep(rnd.nextInt(800));
        assertTrue(Files.isDirectory(queued), "the job left the queue");
        stop("queued");
        running.cancel(true); // interrupts the blocker's training: its job is cancelled too
        awaitSpoolEmpty(s_Spool, "Stop while queued");
      }

      // 4. anywhere in a cross-validation of quick folds (10 folds and the full model: 11 jobs): half the
      // presses at a moment drawn over the duration of a whole one (measured on a warm run), half within a
      // second after the last fold's model came back, while Weka evaluates it, writes the result and builds
      // the visualisation in the run thread (Swing and X11 code: Weka's Thread.stop() there froze the
      // Explorer; this classifier's Stop is an interrupt that Weka's code cannot be stopped half-way by)
      choose(classifier(s_Spool, "-S", "kdb", "-K", "2", "-I", "200"));
      int whole = 0;
      int tail = 0; // from the last fold's model to the run's end
      for (int warm = 0; warm < 2; warm++) {
        Thread.sleep(1100); // a new second: see 5.
        long t0 = System.currentTimeMillis();
        start();
        long last = awaitLastFold();
        awaitPanelReady("a whole cross-validation", 300000);
        whole = (int) (System.currentTimeMillis() - t0);
        tail = (int) (System.currentTimeMillis() - last);
        awaitSpoolEmpty(s_Spool, "a whole cross-validation");
      }
      int presses = Integer.getInteger("hdp.stop.presses", 16);
      int finished = 0;
      for (int i = 0; i < 6 * presses && m_Presses.getOrDefault("cross-validation", 0) + m_Presses.getOrDefault(
        "cross-validation, its end", 0) < presses; i++) {
        boolean atTheEnd = i % 2 == 1;
        start();
        if (atTheEnd) {
          awaitLastFold();
          Thread.sleep(rnd.nextInt(Math.max(1, Math.min(1000, tail))));
        } else {
          Thread.sleep(rnd.nextInt(Math.max(1, whole)));
        }
        if (!stopNow(atTheEnd ? "cross-validation, its end" : "cross-validation")) { // ended before the press
          finished++;
          awaitPanelReady("a run that finished");
        }
        awaitSpoolEmpty(s_Spool, "Stop during cross-validation");
      }

      // 5. and Start still runs a cross-validation to its end (a second after the last start: Weka names a
      // result "HH:mm:ss - classifier", and a run started in the same second as the one before shows the
      // earlier run's output, since the history stores the new one as "NAME_0" but the panel updates NAME)
      Thread.sleep(1100);
      String out = onEdt(m_Panel.m_OutText::getText);
      start();
      awaitPanelReady("a whole cross-validation", 300000);
      long end = System.currentTimeMillis() + 120000;
      while (onEdt(m_Panel.m_OutText::getText).equals(out) && System.currentTimeMillis() < end) {
        Thread.sleep(50);
      }
      assertTrue(onEdt(m_Panel.m_OutText::getText).contains("=== Stratified cross-validation ==="), onEdt(
        m_Panel.m_OutText::getText) + "\nlog:\n" + onEdt(m_Log::getText));
      awaitSpoolEmpty(s_Spool, "a whole cross-validation");

      int total = m_Presses.values().stream().mapToInt(Integer::intValue).sum();
      System.err.println("ExplorerStopIT (seed " + seed + "): Stop pressed " + total + " times " + m_Presses
        + ", " + finished + " runs ended before their press (a whole cross-validation " + whole + " ms)");
      // a run may end before its press (a busy machine's runs vary in length): half of the presses at least
      assertTrue(2 * (m_Presses.getOrDefault("cross-validation", 0) + m_Presses.getOrDefault(
        "cross-validation, its end", 0)) >= presses, "only " + m_Presses + " of " + presses
        + " presses in the cross-validation, " + finished + " runs ended before their press");
      // the log panel tells what happened: the daemon starting (and a compilation of kernels only where its log
      // says numba compiled them: the wheel carries them compiled), each Stop
      String text = onEdt(m_Log::getText);
      assertTrue(text.contains("HDPBayesNet: starting the hdp-bnc daemon"), text);
      java.util.regex.Matcher log = java.util.regex.Pattern.compile("\\(log: ([^)]+)\\)").matcher(text);
      if (text.contains("is compiling hdp_plugin's numba kernels") && log.find()) {
        assertTrue(new String(Files.readAllBytes(Paths.get(log.group(1))), java.nio.charset.StandardCharsets.UTF_8)
          .contains("compiling hdp_plugin's numba kernels"), "the log panel says the daemon compiles: " + text);
      }
      assertFalse(text.contains("Problem evaluating"), text);
    } finally {
      blockers.shutdownNow();
      SwingUtilities.invokeAndWait(m_Frame::dispose);
    }
  }
}
