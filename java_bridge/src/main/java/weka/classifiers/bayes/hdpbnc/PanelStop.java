/*
 *   This program is free software: you can redistribute it and/or modify
 *   it under the terms of the GNU General Public License as published by
 *   the Free Software Foundation, either version 3 of the License, or
 *   (at your option) any later version.
 */

package weka.classifiers.bayes.hdpbnc;

import java.awt.event.ActionEvent;
import java.awt.event.ActionListener;
import java.lang.reflect.Field;
import java.util.Collections;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;

import javax.swing.AbstractButton;
import javax.swing.SwingUtilities;

/**
 * The Stop button of the Explorer's Classify panel, for a run of HDPBayesNet: an interrupt, which the
 * training thread answers itself at the next point where it is in this classifier's code (ending by a
 * {@link ThreadDeath} of its own, as Weka's {@code Thread.stop()} would), instead of Weka's interrupt and
 * {@code Thread.stop()}.
 *
 * <p>Weka's panel runs Swing and AWT code in its run thread: status messages, the result's text, and as a
 * run ends the visualisation, whose file chooser asks the X11 clipboard while holding the toolkit's lock.
 * A {@code Thread.stop()} that lands there can leave that lock taken by a thread that no longer runs, and
 * then the run thread and the event thread wait for it for good: the whole Explorer freezes (with Weka's
 * own classifiers too). Only an interrupt is safe there. So this classifier puts, on the panel's event
 * thread, its own listener in place of the panel's Stop listener: for a run of HDPBayesNet (the run thread
 * has entered {@link #enter}, or the panel's classifier was an HDPBayesNet when Start was pressed) it only
 * interrupts; for any other run it calls Weka's listener, which interrupts and stops as before. A Stop
 * pressed after the run's last call into this classifier lets Weka finish the run.
 *
 * <p>The training thread itself never touches Swing here: {@link #enter} posts the installation to the
 * event thread, once per panel.
 */
public final class PanelStop {

  /** The client property that marks a Stop button whose listener this class has replaced. */
  static final String INSTALLED = "hdpbnc.PanelStop";

  private static final String CLASSIFIER = "weka.classifiers.bayes.HDPBayesNet";

  /** The run threads that have entered this classifier's training from a Classify panel. */
  private static final Set<Thread> OURS = Collections.synchronizedSet(Collections.newSetFromMap(
    new WeakHashMap<>()));

  /** The panels whose Stop button has the listener (or is having it put in place). */
  private static final Set<Object> PANELS = Collections.synchronizedSet(Collections.newSetFromMap(
    new WeakHashMap<>()));

  /** Per panel: whether its classifier was an HDPBayesNet when Start was last pressed (event thread only). */
  private static final Map<Object, Boolean> STARTED_OURS = Collections.synchronizedMap(new WeakHashMap<>());

  private PanelStop() {
  }

  /**
   * Called by the training thread as it enters training: if it is a Classify panel's run thread, marks it
   * as a run of this classifier and posts the installation of the Stop listener to the event thread.
   *
   * @param thread the training thread
   * @return true if the thread is a Classify panel's run thread
   */
  public static boolean enter(Thread thread) {
    Object panel = panelOf(thread);
    if (panel == null) {
      return false;
    }
    OURS.add(thread);
    if (PANELS.add(panel)) { // posted once per panel: later runs' Stop is already an interrupt only
      SwingUtilities.invokeLater(() -> install(panel));
    }
    return true;
  }

  /**
   * @param thread a thread
   * @return true if a Stop of this thread is an interrupt only, which the thread must answer itself
   */
  public static boolean cooperative(Thread thread) {
    return OURS.contains(thread);
  }

  /**
   * Ends the calling thread as Weka's Stop would, if it was interrupted by the Stop of a run of this
   * classifier: clears the interrupt, says "stopped" in the panel's status line ({@link Feedback#stoppedInPanel})
   * and throws a {@link ThreadDeath}. A cheap check where it is not.
   *
   * @throws ThreadDeath if the thread is to stop
   */
  public static void stopIfAsked() {
    Thread t = Thread.currentThread();
    if (t.isInterrupted() && cooperative(t)) {
      Thread.interrupted();
      Feedback.stoppedInPanel(t);
      throw new ThreadDeath();
    }
  }

  /**
   * The Classify panel that made the thread (the enclosing instance of Weka's anonymous run thread) if it
   * has the fields this class uses, else null.
   */
  static Object panelOf(Thread thread) {
    try {
      for (Class<?> c = thread.getClass(); c != null && c != Thread.class; c = c.getSuperclass()) {
        for (Field f : c.getDeclaredFields()) {
          if (f.getName().startsWith("this$")) {
            f.setAccessible(true);
            Object outer = f.get(thread);
            if (outer != null && field(outer, "m_StopBut") instanceof AbstractButton
              && field(outer, "m_StartBut") instanceof AbstractButton && field(outer, "m_RunThread") == thread) {
              return outer;
            }
          }
        }
      }
    } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
      // not Weka's Classify panel (or one we do not know): Weka's Stop as it is
    }
    return null;
  }

  private static Object field(Object target, String name) throws ReflectiveOperationException {
    for (Class<?> c = target.getClass(); c != null; c = c.getSuperclass()) {
      try {
        Field f = c.getDeclaredField(name);
        f.setAccessible(true);
        return f.get(target);
      } catch (NoSuchFieldException e) {
        // look in the superclass
      }
    }
    throw new NoSuchFieldException(name);
  }

  /** On the event thread: puts the listener in place of the panel's Stop listeners, once per panel. */
  static void install(Object panel) {
    try {
      AbstractButton stop = (AbstractButton) field(panel, "m_StopBut");
      AbstractButton start = (AbstractButton) field(panel, "m_StartBut");
      if (stop.getClientProperty(INSTALLED) != null) {
        return;
      }
      ActionListener[] weka = stop.getActionListeners();
      for (ActionListener l : weka) {
        stop.removeActionListener(l);
      }
      stop.addActionListener(e -> pressed(panel, weka, e));
      // the last listener added runs first: this one sees the classifier that Weka's Start listener copies
      start.addActionListener(e -> STARTED_OURS.put(panel, classifierIsOurs(panel)));
      stop.putClientProperty(INSTALLED, Boolean.TRUE);
    } catch (ReflectiveOperationException | RuntimeException e) {
      // Weka's Stop as it is
    }
  }

  private static boolean classifierIsOurs(Object panel) {
    try {
      Object editor = field(panel, "m_ClassifierEditor");
      Object value = editor.getClass().getMethod("getValue").invoke(editor);
      return value != null && value.getClass().getName().equals(CLASSIFIER);
    } catch (ReflectiveOperationException | RuntimeException e) {
      return false;
    }
  }

  private static void pressed(Object panel, ActionListener[] weka, ActionEvent e) {
    Thread run;
    try {
      run = (Thread) field(panel, "m_RunThread");
    } catch (ReflectiveOperationException | RuntimeException ex) {
      run = null;
    }
    if (run != null && (OURS.contains(run) || Boolean.TRUE.equals(STARTED_OURS.get(panel)))) {
      OURS.add(run); // a run that has not reached the classifier yet answers once it does
      run.interrupt();
      return;
    }
    for (int i = weka.length - 1; i >= 0; i--) { // Swing's order: the last added first
      weka[i].actionPerformed(e);
    }
  }
}
