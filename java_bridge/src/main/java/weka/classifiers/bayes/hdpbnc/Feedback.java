/*
 *   This program is free software: you can redistribute it and/or modify
 *   it under the terms of the GNU General Public License as published by
 *   the Free Software Foundation, either version 3 of the License, or
 *   (at your option) any later version.
 */

package weka.classifiers.bayes.hdpbnc;

import java.lang.reflect.Field;
import java.util.concurrent.ConcurrentLinkedQueue;

import weka.core.logging.Logger;

/**
 * Where a training's messages go: Weka's log (weka.log), the Explorer's log panel and status line when
 * the training runs in the Explorer, and the console otherwise (weka.Run, the Experimenter) or with
 * {@code -output-debug-info}.
 *
 * <p>The training thread only queues messages ({@link #log}, {@link #status}); another thread writes
 * them out ({@link #flush}). Weka's Stop button interrupts the training thread and then stops it at
 * once: a thread that is interrupted, or stopped half-way, must not touch Swing (Weka's log panel then
 * fails with "Interrupted attempt to acquire write lock" and the panel stays stuck), and messages for
 * the panel go through the event thread in any case.
 */
public final class Feedback {

  private final Object m_Panel; // a weka.gui.Logger, or null
  private final boolean m_Console;
  private final ConcurrentLinkedQueue<String[]> m_Queue = new ConcurrentLinkedQueue<>();

  /**
   * @param panel the Explorer's logger (a {@code weka.gui.Logger}), or null
   * @param console whether messages also go to the console (stderr)
   */
  Feedback(Object panel, boolean console) {
    m_Panel = panel;
    m_Console = console;
  }

  /**
   * The feedback for a training on the given thread: the Explorer's log panel if the thread is one of the
   * Explorer's classifier threads, else the console; with {@code verbose} the console in any case.
   */
  public static Feedback forThread(Thread thread, boolean verbose) {
    Object panel = panelLogger(thread);
    return new Feedback(panel, verbose || panel == null);
  }

  /** @return true if the messages go to a Weka GUI panel */
  public boolean toPanel() {
    return m_Panel != null;
  }

  /**
   * A weka.gui.Logger held by the object that made the thread: the Explorer's ClassifierPanel runs each
   * training in an anonymous Thread whose enclosing instance holds the panel's logger ({@code m_Log}).
   */
  static Object panelLogger(Thread thread) {
    try {
      Class<?> logger = Class.forName("weka.gui.Logger", false, Feedback.class.getClassLoader());
      for (Class<?> c = thread.getClass(); c != null && c != Thread.class; c = c.getSuperclass()) {
        for (Field f : c.getDeclaredFields()) {
          if (f.getName().startsWith("this$")) {
            f.setAccessible(true);
            Object outer = f.get(thread);
            for (Class<?> o = outer == null ? null : outer.getClass(); o != null; o = o.getSuperclass()) {
              for (Field g : o.getDeclaredFields()) {
                if (logger.isAssignableFrom(g.getType())) {
                  g.setAccessible(true);
                  Object value = g.get(outer);
                  if (value != null) {
                    return value;
                  }
                }
              }
            }
          }
        }
      }
    } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
      // not in a Weka GUI (or one we do not know): the console
    }
    return null;
  }

  /** Queues a line, without the "HDPBayesNet: " prefix, for the log (Weka's, the Explorer's panel, the console). */
  public void log(String message) {
    m_Queue.add(new String[] {"log", "HDPBayesNet: " + message});
  }

  /**
   * Queues a status, without the "HDPBayesNet: " prefix: the Explorer's status line; the console (where it is
   * used) only if {@code console} is set (callers throttle progress lines there).
   */
  public void status(String message, boolean console) {
    m_Queue.add(new String[] {console ? "status+" : "status", "HDPBayesNet: " + message});
  }

  /**
   * Says "stopped" in the status line of the Weka panel that runs the thread, if any. A run that the
   * classifier ends itself on a Stop ends by a {@link ThreadDeath} with its interrupt cleared, after which
   * Weka's panel sets no status of its own: its status line would keep what was said last ("Building model
   * for fold 1...", the daemon's "saving"). Called by the stopped thread with its interrupt cleared, as it
   * leaves; the message goes through the event thread, after everything posted before it.
   *
   * @param thread the stopped thread
   */
  public static void stoppedInPanel(Thread thread) {
    Feedback f = forThread(thread, false);
    if (f.toPanel()) {
      f.status("stopped", false);
      f.flush();
    }
  }

  /** Writes out the queued messages; called from a thread that nobody interrupts or stops. */
  public void flush() {
    String[] m;
    while ((m = m_Queue.poll()) != null) {
      final String kind = m[0];
      final String text = m[1];
      if (kind.equals("log")) {
        Logger.log(Logger.Level.INFO, text);
      }
      if (m_Console && !kind.equals("status")) {
        System.err.println(text);
      }
      if (m_Panel != null) {
        javax.swing.SwingUtilities.invokeLater(() -> {
          weka.gui.Logger panel = (weka.gui.Logger) m_Panel;
          if (kind.equals("log")) {
            panel.logMessage(text);
          } else {
            panel.statusMessage(text);
          }
        });
      }
    }
  }
}
